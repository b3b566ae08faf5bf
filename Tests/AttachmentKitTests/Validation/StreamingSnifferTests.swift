import Testing

@testable import AttachmentKit

/// Sniffing while bytes stream: its cost follows the bytes, not the number of writes.
@Suite("Streaming sniffer")
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
