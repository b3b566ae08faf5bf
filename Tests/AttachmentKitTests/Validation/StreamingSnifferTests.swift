import TestTraits
import Testing

@testable import AttachmentKit

/// Sniffing while bytes stream: its cost follows the bytes, not the number of writes.
/// On the worker thread for CPU-bound tests (`.cpuBound`): every sample is fed one byte a write.
@Suite("Streaming sniffer", .cpuBound)
struct StreamingSnifferTests {
  /// Feeds `body` to a fresh sniffer `chunk` bytes at a time; returns the verdict that stopped
  /// it (or `.more`), how many bytes it had seen then, and how many judgements it made.
  private static func feed(_ body: [UInt8], chunk: Int) -> (InspectorVerdict, Int, Int) {
    let sniffer = StreamingSniffer()
    var headers = ResponseHeaders()
    headers.append(name: "Content-Length", value: String(body.count))
    _ = sniffer.inspect(head: ResponseHead(status: 200, headers: headers))
    var offset = 0
    while offset < body.count {
      let end = min(body.count, offset + chunk)
      let verdict = body[offset..<end].withUnsafeBytes { sniffer.inspect(body: $0, at: Int64(offset)) }
      offset = end
      switch verdict {
      case .more: continue
      case .enough, .reject: return (verdict, offset, sniffer.judgements)
      }
    }
    return (.more, offset, sniffer.judgements)
  }

  private static func rejection(_ verdict: InspectorVerdict) -> AttachmentError? {
    if case .reject(let error) = verdict { return error }
    return nil
  }

  @Test(
    "64 KiB that never identifies, 1 byte a write: refused at the window's end after at most 5 judgements")
  func oneByteWritesCostFiveJudgements() {
    // Noise libmagic calls application/octet-stream (plausible, so sniffing waits for more)
    let noise = testBytes(count: 70 * 1024, seed: 64)
    let (verdict, seen, judgements) = Self.feed(noise, chunk: 1)
    #expect(Self.rejection(verdict)?.code == .unsupportedType)
    #expect(seen == SniffWindow.maximumBytes)
    #expect(judgements <= 5, "\(judgements) judgements for one body")
    // In one 64 KiB write it is judged once.
    #expect(Self.feed(noise, chunk: 64 * 1024).2 == 1)
  }

  @Test("an HTML page is refused at the first judgement (4 KiB), whatever the write size")
  func htmlRefusedAtFirstJudgement() {
    let page = Array(("<!DOCTYPE html><html><body>" + String(repeating: "<p>login</p>", count: 2000)).utf8)
    for chunk in [1, 7, 4096] {
      let (verdict, seen, judgements) = Self.feed(page, chunk: chunk)
      #expect(Self.rejection(verdict)?.detected == "text/html", "chunk \(chunk)")
      #expect(seen <= 4096 + chunk - 1, "chunk \(chunk): refused after \(seen) bytes")
      #expect(judgements == 1, "chunk \(chunk)")
    }
  }

  @Test(
    "real samples, 1 byte a write, are never refused and take few judgements", arguments: Samples.accepted)
  func samplesAcceptedByteByByte(_ entry: Samples.Entry) throws {
    let bytes = try Samples.bytes(entry.file)
    let (verdict, _, judgements) = Self.feed(bytes, chunk: 1)
    #expect(Self.rejection(verdict) == nil, "\(entry.file): \(String(describing: Self.rejection(verdict)))")
    #expect(judgements <= 5, "\(entry.file): \(judgements) judgements")
  }
}

/// One identification per transfer: the validator continues from the sniffer's verdict.
@Suite("Sniffer to validator", .cpuBound)
struct SniffVerdictTests {
  @Test("the sniffer's verdict goes to the validator, which neither identifies nor asks libmagic again")
  func validatorContinuesFromTheVerdict() throws {
    // Given the sniffer's verdict on a movie's first bytes (over 4 KiB, so it judges them)
    let name = "mp4-isom.mp4"
    let bytes = try Samples.bytes(name)
    let sniffer = StreamingSniffer()
    _ = sniffer.inspect(head: ResponseHead(status: 200, headers: ResponseHeaders()))
    _ = bytes.withUnsafeBytes { sniffer.inspect(body: $0, at: 0) }
    let verdict = try #require(sniffer.verdict)
    // (with the header's dimensions, which a rescuer's early start reads instead of the file;
    // libmagic was not asked, as the probes told the bytes apart at once)
    #expect(verdict == SniffVerdict(format: .isoBMFF, detected: nil, width: 160, height: 120))

    // When the validator is handed that verdict with a sentinel for libmagic's answer
    let marked = SniffVerdict(format: verdict.format, detected: "x-test/from-the-sniffer")
    let validation = try Validator().judge(
      file: Samples.path(name), sha256: nil, signal: StopSignal(deadline: nil), sniffed: marked)

    // Then it used that answer (libmagic was not asked again) and still walked the whole file
    #expect(validation.detectedMIME == "x-test/from-the-sniffer")
    #expect(validation.type == .mp4)
    #expect(validation.durationSeconds != nil)
    // and a verdict that does not fit the file is refused by the complete-file walk, which
    // then asks libmagic to name what it is
    let refusal = #expect(throws: Refusal.self) {
      try Validator().judge(
        file: Samples.path(name), sha256: nil, signal: StopSignal(deadline: nil),
        sniffed: SniffVerdict(format: .png, detected: nil))
    }
    #expect(refusal?.error.detected == "video/mp4")
    #expect(refusal?.format == "video/mp4")
  }

  @Test("libmagic is asked only while the probes cannot tell, or to name a refusal")
  func magicOnlyForRefusals() throws {
    // An accepted movie over 4 KiB is judged while it streams, and never named by libmagic
    let movie = StreamingSniffer()
    _ = try Samples.bytes("mp4-avc1.mp4").withUnsafeBytes { movie.inspect(body: $0, at: 0) }
    #expect(movie.verdict?.detected == nil)
    #expect(try Validator().validate(file: Samples.path("jpeg-baseline.jpg")).detectedMIME == nil)
    // A page is named: streaming (the probes cannot tell) and the complete-file check alike
    var page = try Samples.bytes("html-error-page.html")
    while page.count < 5000 { page += page }
    let sniffer = StreamingSniffer()
    guard case .reject(let streamed) = page.withUnsafeBytes({ sniffer.inspect(body: $0, at: 0) }) else {
      Issue.record("a page streamed on")
      return
    }
    #expect(streamed.detected == "text/html")
    let checked = #expect(throws: AttachmentError.self) {
      try Validator().validate(file: Samples.path("html-error-page.html"))
    }
    #expect(checked?.detected == "text/html")
    // and so is a file whose structure is refused
    let cut = #expect(throws: AttachmentError.self) {
      try Validator().validate(file: Samples.path("truncated-png-no-iend.png"))
    }
    #expect(cut?.detected == "image/png")
  }
}
