import Foundation
import TestSupport
import TestTraits
import Testing

@testable import AttachmentKit

/// Rescue end to end: the samples served by a real loopback server, real libcurl, libmagic and
/// libvips, a real cache; the delivered files checked by the validator and by size.
///
/// With the rescue turn (``RescueTurnTrait``): every test here takes the process's image-rescue
/// gate (`RescueGate.image`), and `deadlineWhileRescuing` holds it on purpose; run beside
/// another in-process rescue, either would queue behind the other past its deadline.
@Suite("Rescue: pipeline", .rescueTurn, .threadOfItsOwn)
struct RescuePipelineTests {
  /// A server and a pipeline with rescue on (default settings) over a fresh cache.
  static func rescueFixture(configure: (inout PipelineConfiguration) -> Void = { _ in }) throws
    -> PipelineFixture
  {
    try PipelineFixture("rescue") {
      $0.rescue = RescueConfiguration()
      configure(&$0)
    }
  }

  struct Case: Sendable, CustomTestStringConvertible {
    let file: String
    let type: MediaType
    let from: String
    var frames: Int? = nil
    var testDescription: String { "\(file) → \(type.rawValue)" }
  }

  static let conversions: [Case] = [
    Case(file: "webp-lossy.webp", type: .jpeg, from: "image/webp"),
    Case(file: "webp-alpha.webp", type: .png, from: "image/webp"),
    Case(file: "webp-animated.webp", type: .gif, from: "image/webp", frames: 2),
    Case(file: "heic-still.heic", type: .jpeg, from: "image/heic"),
    Case(file: "avif-still.avif", type: .jpeg, from: "image/avif"),
    Case(file: "jpeg2000.jp2", type: .jpeg, from: "image/jp2"),
    Case(file: "jpegxl.jxl", type: .jpeg, from: "image/jxl"),
    Case(file: "jpeg2000-codestream.j2k", type: .jpeg, from: "image/x-jp2-codestream"),
    // An accepted type whose structure is not valid: re-encoded from what libvips reads.
    Case(file: "bigtiff.tif", type: .jpeg, from: "image/tiff"),
  ]

  @Test(
    "a near-miss sample becomes a valid attachment: converted, same size, nothing left over",
    arguments: conversions)
  func converts(_ sample: Case) async throws {
    // Given a refused sample served under a URL without extension
    let fixture = try Self.rescueFixture()
    defer { fixture.close() }
    let source = Samples.path(sample.file)
    let url = fixture.serve(source, name: "photo")
    let sourceBytes = try Samples.bytes(sample.file).count

    // When it is fetched with rescue on
    let attachment = try await fixture.pipeline.attachment(for: url, timeout: generousTimeout)

    // Then the delivered file is the expected type, 64×48, and says what it was made from
    #expect(attachment.type == sample.type)
    #expect(attachment.path.hasSuffix("." + sample.type.fileExtension))
    #expect(attachment.validation.width == 64)
    #expect(attachment.validation.height == 48)
    if let frames = sample.frames { #expect(attachment.validation.frames == frames) }
    let rescued = try #require(attachment.validation.rescued)
    #expect(rescued.from == sample.from)
    #expect(rescued.actions == [.converted])
    #expect(rescued.originalBytes == Int64(sourceBytes))
    #expect(rescued.originalWidth == 64 && rescued.originalHeight == 48)
    // and the file on disk is what the result describes, re-validated from scratch
    let again = try Validator().validate(file: attachment.path)
    #expect(again.type == sample.type)
    #expect(again.sha256 == attachment.sha256)
    #expect(again.bytes == attachment.bytes)
    let left = await fixture.leftBehind()
    #expect(left.isEmpty, "left behind: \(left)")
    #expect(await fixture.settledTemporaryFiles().isEmpty)
  }

  @Test("an animated WebP keeps its frame delays, in GIF's 10 ms steps")
  func animationTiming() async throws {
    let fixture = try Self.rescueFixture()
    defer { fixture.close() }
    let url = fixture.serve(Samples.path("webp-animated.webp"), name: "anim")

    let attachment = try await fixture.pipeline.attachment(for: url, timeout: generousTimeout)

    // GIF Graphic Control Extensions: 21 F9 04 <flags> <delay LE, centiseconds>
    let bytes = Array(try Data(contentsOf: URL(fileURLWithPath: attachment.path)))
    var delays: [Int] = []
    for index in 0..<(bytes.count - 6)
    where bytes[index] == 0x21 && bytes[index + 1] == 0xF9 && bytes[index + 2] == 4 {
      delays.append(Int(bytes[index + 4]) | Int(bytes[index + 5]) << 8)
    }
    #expect(delays == [10, 25])
  }

  struct LargeCase: Sendable, CustomTestStringConvertible {
    let file: String
    let type: MediaType
    let from: String
    let actions: [Rescue.Action]
    let width: Int
    let height: Int
    /// Whether the shown image is portrait (orientation applied to the pixels).
    let portrait: Bool
    var testDescription: String { file }
  }

  static let largeCases: [LargeCase] = [
    LargeCase(
      file: "jpeg-24mp.jpg", type: .jpeg, from: "image/jpeg", actions: [.downscaled], width: 6000,
      height: 4000,
      portrait: false),
    LargeCase(
      file: "jpeg-24mp-orientation-6.jpg", type: .jpeg, from: "image/jpeg", actions: [.downscaled],
      width: 6000,
      height: 4000, portrait: true),
    LargeCase(
      file: "png16-over-limits.png", type: .jpeg, from: "image/png", actions: [.converted, .downscaled],
      width: 5000, height: 4000, portrait: false),
    LargeCase(
      file: "jpeg-12mp-over-10mb.jpg", type: .jpeg, from: "image/jpeg", actions: [.downscaled], width: 4000,
      height: 3000, portrait: false),
  ]

  @Test(
    "an image over the byte or pixel limit is downscaled to fit both, orientation applied",
    arguments: largeCases)
  func downscales(_ sample: LargeCase) async throws {
    // Given a large sample the validator refuses (too_many_pixels or too_large)
    let file = try await LargeSamples.path(sample.file)
    let refusal = #expect(throws: AttachmentError.self) { try Validator().validate(file: file) }
    #expect([.tooManyPixels, .tooLarge].contains(refusal?.code))
    let fixture = try Self.rescueFixture()
    defer { fixture.close() }
    let url = fixture.serve(file, name: "big")

    // When it is fetched with rescue on
    let attachment = try await fixture.pipeline.attachment(for: url, timeout: .seconds(20))

    // Then it fits every limit, keeps its aspect ratio, is shown upright, and says what was done
    let limits = ValidationLimits()
    let width = try #require(attachment.validation.width)
    let height = try #require(attachment.validation.height)
    #expect(attachment.type == sample.type)
    #expect(attachment.bytes <= limits.maximumImageBytes)
    #expect(Int64(width) * Int64(height) * 4 <= limits.maximumDecodedImageBytes)
    #expect(max(width, height) <= RescueConfiguration().maximumDimension)
    #expect((height > width) == sample.portrait)
    let long = Double(max(sample.width, sample.height)) / Double(min(sample.width, sample.height))
    #expect(abs(Double(max(width, height)) / Double(min(width, height)) - long) < 0.01)
    let rescued = try #require(attachment.validation.rescued)
    #expect(rescued.from == sample.from)
    #expect(rescued.actions == sample.actions)
    #expect(rescued.originalWidth == sample.width && rescued.originalHeight == sample.height)
    #expect(
      rescued.originalBytes
        == Int64(try FileManager.default.attributesOfItem(atPath: file)[.size] as? Int ?? -1))
    let left = await fixture.leftBehind()
    #expect(left.isEmpty, "left behind: \(left)")
  }

  @Test("orientation 6 is applied to the pixels: the stored top edge becomes the right edge")
  func orientationPixels() async throws {
    // Given the 24 MP gradient (blue at the top as stored) tagged orientation 6 (rotate 90° clockwise)
    let fixture = try Self.rescueFixture()
    defer { fixture.close() }
    let url = fixture.serve(try await LargeSamples.path("jpeg-24mp-orientation-6.jpg"), name: "turned")

    let attachment = try await fixture.pipeline.attachment(for: url, timeout: .seconds(20))

    // Then the delivered pixels are upright: blue on the right, orange on the left, no tag left
    let width = try #require(attachment.validation.width)
    let height = try #require(attachment.validation.height)
    let right = try await Self.pixel(attachment.path, x: width - 8, y: height / 2)
    let left = try await Self.pixel(attachment.path, x: 8, y: height / 2)
    #expect(right[2] > right[0], "right edge \(right) should be blue (#2060c0)")
    #expect(left[0] > left[2], "left edge \(left) should be orange (#f0a020)")
    // (metadata is stripped: no orientation tag, or an upright one)
    let tag = try await Self.run("/usr/bin/vipsheader", ["-f", "orientation", attachment.path])
    #expect(tag.isEmpty || tag.hasPrefix("1"), "orientation \(tag)")
  }

  @Test("SVG, HTML and PDF are still refused with rescue on, and leave nothing behind")
  func stillRefused() async throws {
    let fixture = try Self.rescueFixture()
    defer { fixture.close() }
    for (file, detected) in [
      ("svg-image.svg", "image/svg+xml"), ("html-error-page.html", "text/html"),
      ("pdf-document.pdf", "application/pdf"),
    ] {
      let url = fixture.serve(Samples.path(file), name: file)
      let error = await #expect(throws: AttachmentError.self) {
        try await fixture.pipeline.attachment(for: url, timeout: generousTimeout)
      }
      #expect(error?.code == .unsupportedType, "\(file)")
      #expect(error?.detected == detected, "\(file)")
    }
    let left = await fixture.leftBehind()
    #expect(left.isEmpty, "left behind: \(left)")
    #expect(await fixture.settledTemporaryFiles().isEmpty)
  }

  @Test("the 30000×30000 PNG is refused from its header, well within a generous deadline")
  func pixelBomb() async throws {
    let fixture = try Self.rescueFixture()
    defer { fixture.close() }
    let url = fixture.serve(Samples.path("too-many-pixels-30000x30000.png"), name: "bomb")

    // 30 s: refused from its header, it is answered in well under a second alone; 5 s ran out
    // once in a full parallel run. Decoding it instead would run to this deadline.
    let deadline = ContinuousClock.now + generousTimeout
    let start = ContinuousClock.now
    let error = await #expect(throws: AttachmentError.self) {
      try await fixture.pipeline.attachment(for: url, deadline: deadline)
    }
    let elapsed = ContinuousClock.now - start

    #expect(error?.code == .tooManyPixels)
    #expect(error?.message.contains("decode budget") == true)
    // Refused from the header before its deadline, not by decoding 900 megapixels until the
    // deadline stops it (that would be deadline_exceeded)
    #expect(elapsed < generousTimeout)
    let left = await fixture.leftBehind()
    #expect(left.isEmpty, "left behind: \(left)")
  }

  @Test("a truncated WebP is refused as the original was, with nothing left behind")
  func truncatedWebP() async throws {
    let fixture = try Self.rescueFixture()
    defer { fixture.close() }
    let whole = try Samples.bytes("webp-lossy.webp")
    fixture.server.serve("/cut", body: Array(whole.prefix(whole.count * 2 / 3)), contentType: "image/webp")

    let error = await #expect(throws: AttachmentError.self) {
      try await fixture.pipeline.attachment(for: fixture.server.url("/cut"), timeout: generousTimeout)
    }

    #expect(error?.code == .unsupportedType)
    #expect(error?.detected == "image/webp")
    #expect(error?.message.contains("Not rescued") == true)
    let left = await fixture.leftBehind()
    #expect(left.isEmpty, "left behind: \(left)")
    #expect(await fixture.settledTemporaryFiles().isEmpty)
  }

  @Test("a source over the rescue's source limit stops the transfer with too_large")
  func sourceLimit() async throws {
    let fixture = try Self.rescueFixture { $0.rescue?.maximumSourceBytes = 11_000_000 }
    defer { fixture.close() }
    let url = fixture.serve(try await LargeSamples.path("jpeg-12mp-over-10mb.jpg"), name: "huge")

    let error = await #expect(throws: AttachmentError.self) {
      try await fixture.pipeline.attachment(for: url, timeout: generousTimeout)
    }

    #expect(error?.code == .tooLarge)
    #expect(error?.message.contains("source limit of 11000000") == true)
    let left = await fixture.leftBehind()
    #expect(left.isEmpty, "left behind: \(left)")
  }

  @Test(
    "a rescue waiting for another is answered at its deadline and gives up there, leaving nothing, while the other still runs"
  )
  func deadlineWhileRescuing() async throws {
    // Given another rescue holding the only place of a one-worker pool (a pool of its own for
    // this test: a thread takes the place and waits for a signal, with no deadline of its own)
    var workers = RescueWorkerConfiguration()
    workers.poolSize = 1
    workers.retireAboveResidentBytes = Int64.random(in: 1 << 30..<1 << 40)  // a pool no other test uses
    let fixture = try Self.rescueFixture {
      var rescue = RescueConfiguration()
      rescue.workers = workers
      $0.rescue = rescue
    }
    defer { fixture.close() }
    let url = fixture.serve(Samples.path("webp-lossy.webp"), name: "late")
    // (the holder blocks on its own thread; the test awaits its flag, holding no pool thread)
    let taken = Flag()
    let release = DispatchSemaphore(value: 0)
    let pool = WorkerPool.pool(for: workers, library: .libvips)
    Thread {
      guard (try? pool.takePermit(until: nil, isCancelled: { false }, waiting: "holder")) != nil else {
        return
      }
      taken.set()
      release.wait()
      pool.returnPermit()
    }.start()
    defer { release.signal() }
    try #require(await taken.wait(upTo: eventWait), "the holder never took the rescue turn")

    // When a WebP is fetched with rescue on and a 1 s deadline
    let deadline = ContinuousClock.now + .seconds(1)
    let request = Task { () -> (AttachmentError.Code?, ContinuousClock.Instant) in
      do {
        _ = try await fixture.pipeline.attachment(for: url, deadline: deadline)
        return (nil, .now)
      } catch let error as AttachmentError {
        return (error.code, .now)
      } catch {
        return (nil, .now)
      }
    }
    // and its rescue is seen waiting for the lock, holding its body and its output: two distinct
    // files (the downloader's own descriptor of the body, closed just after its answer, names
    // the same file and is not counted twice)
    let started = ContinuousClock.now
    while Set(fixture.openTemporaryFiles()).count < 2, ContinuousClock.now - started < .seconds(5) {
      try await Task.sleep(for: .milliseconds(5))
    }
    #expect(Set(fixture.openTemporaryFiles()).count >= 2, "the rescue never started")
    let (code, answered) = await request.value
    // Then the answer is deadline_exceeded, by the deadline + 250 ms
    #expect(code == .deadlineExceeded)
    #expect(answered - deadline < deadlineMargin)
    // and the rescue gave up at its deadline without waiting for the holder, which still runs:
    // its files are removed (observed, 5 s bound) before the holder is released
    #expect(await fixture.settledTemporaryFiles().isEmpty, "the waiting rescue still holds its files")
    let left = await fixture.leftBehind()
    #expect(left.isEmpty, "left behind: \(left)")
  }

  // MARK: - Helpers

  /// The first three bands of the pixel at (x, y), read by libvips' own command-line tool.
  static func pixel(_ path: String, x: Int, y: Int) async throws -> [Double] {
    try await run("/usr/bin/vips", ["getpoint", path, "\(x)", "\(y)"]).split(separator: " ").compactMap {
      Double($0.trimmingCharacters(in: .whitespacesAndNewlines))
    }
  }

  /// Runs `tool` and answers its standard output; the read and the wait are on a thread of
  /// their own.
  static func run(_ tool: String, _ arguments: [String]) async throws -> String {
    try await onOwnThread { () throws -> String in
      let process = Process()
      process.executableURL = URL(fileURLWithPath: tool)
      process.arguments = arguments
      let pipe = Pipe.closingOnExec()
      process.standardOutput = pipe
      try process.runClosingChildEnds()
      let data = pipe.fileHandleForReading.readDataToEndOfFile()
      process.blockUntilExit()
      process.closeStandardPipes()
      return String(decoding: data, as: UTF8.self)
    }
  }
}

extension PipelineFixture {
  /// Serves the file at `path` under `/m/NAME` with a lying type, and answers the URL.
  func serve(_ file: String, name: String) -> String {
    server.serveFile("/m/\(name)", file: file, contentType: "application/octet-stream")
    return server.url("/m/\(name)")
  }
}
