import TestSupport
import TestTraits
import Testing

@testable import AttachmentKit

/// When a rescue's first bytes already call for it, a rescue worker starts (loading libvips in
/// its own process) while the whole file is checked. The guess must be right for what it sees:
/// a start for nothing costs a process, a missed start costs the overlap.
@Suite("Rescue: starting a worker early", .cpuBound)
struct RescueLikelyTests {
  @Test(
    "the first bytes call for a rescue: over the pixel or byte limit, or a type the rescue converts",
    arguments: [
      ("too-many-pixels-30000x30000.png", true),  // its header is over the pixel limit
      ("webp-lossy.webp", true), ("heic-still.heic", true), ("avif-still.avif", true),
      ("jpeg-baseline.jpg", false), ("png-rgba.png", false),  // acceptable as they are
      ("mp4-avc1.mp4", false), ("html-error-page.html", false),  // not images: nothing to rescue
    ])
  func guess(file: String, expected: Bool) async {
    #expect(await Self.startsEarly(Samples.path(file), limits: ValidationLimits()) == expected)
  }

  /// Whether the image rescuer starts a worker for the file's first bytes: a rescuer whose
  /// worker pool no other test uses, whose idle workers are counted after its preparation.
  static func startsEarly(_ path: String, limits: ValidationLimits) async -> Bool {
    await onOwnThread {
      var configuration = RescueConfiguration()
      configuration.workers.retireAboveResidentBytes = Int64.random(in: 1 << 30..<1 << 40)
      let rescuers: [any Rescuer] = [ImageRescuer(configuration: configuration)]
      let preparation = rescuers.preparation(for: Refusal.predicted(ofFile: path, limits: limits))
      preparation?.wait()
      let pool = WorkerPool.pool(for: configuration.workers, library: .libvips)
      defer { pool.retireIdle() }
      return pool.idleCount == 1
    }
  }

  @Test("an image over the caller's byte limit calls for a rescue; a missing file does not")
  func byteLimit() async {
    var limits = ValidationLimits()
    limits.maximumImageBytes = 100
    #expect(await Self.startsEarly(Samples.path("jpeg-baseline.jpg"), limits: limits))
    #expect(await !Self.startsEarly("/nonexistent/a.jpg", limits: ValidationLimits()))
  }

  @Test("a local rescue started early delivers the same file, and an accepted file is untouched")
  func rescueStillDelivers() async throws {
    let scratch = try ScratchDirectory("rescue-early")
    defer { scratch.remove() }
    let rescuer = ImageRescuer()
    let output = scratch.path + "/out"
    let source = try await LargeSamples.path("jpeg-24mp.jpg")  // 6000×4000: over the pixel limit
    #expect(await Self.startsEarly(source, limits: ValidationLimits()))
    // The rescues wait for the process-wide rescue lock and decode: on a thread of their own.
    let rescued = try await onOwnThread { () throws(AttachmentError) -> Validation in
      try rescuer.attachment(fromFile: source, rescuingInto: output)
    }
    #expect(rescued.rescued != nil)
    let validated = try Validator().validate(file: output)
    #expect(validated.sha256 == rescued.sha256)
    let accepted = try await onOwnThread { () throws(AttachmentError) -> Validation in
      try rescuer.attachment(fromFile: Samples.path("jpeg-baseline.jpg"), rescuingInto: output + "2")
    }
    #expect(accepted.rescued == nil)
  }
}
