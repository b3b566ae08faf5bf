import Foundation
import TestSupport
import TestTraits
import Testing

@testable import AttachmentKit

/// The security review's rescue bombs (issue #25, item 1), through the real image rescuer and
/// libvips: work the pixel budget does not see is bounded before decoding, and a rescue that
/// runs out of time stops libvips at its deadline.
@Suite("Rescue: decode-work bombs", .rescueTurn, .threadOfItsOwn)
struct ImageRescueBombTests {
  /// A refusal the image rescuer undoes (an image over the byte limit): the bombs are handed
  /// to it as the pipeline would hand a near-miss.
  static func refusal(bytes: Int) -> Refusal {
    Refusal(
      AttachmentError(.tooLarge, "The image is over the limit.", detected: "image/jpeg"), category: .image,
      facts: MediaFacts(bytes: Int64(bytes)))
  }

  /// Rescues `bytes` (written to a scratch file) with `configuration`, answering the error code
  /// (nil: rescued), its message, and the instant the rescue returned.
  static func rescue(
    _ bytes: [UInt8], name: String, configuration: RescueConfiguration = RescueConfiguration(),
    timeout: Duration? = nil
  ) throws -> (code: AttachmentError.Code?, message: String, returned: ContinuousClock.Instant) {
    let scratch = try ScratchDirectory("bomb")
    defer { scratch.remove() }
    let source = scratch.path + "/" + name
    try writeTestFile(Data(bytes), to: source)
    let refusal =
      name.hasSuffix(".webp")
      ? Refusal(
        AttachmentError(.unsupportedType, "WebP is not accepted.", detected: "image/webp"),
        facts: MediaFacts(bytes: Int64(bytes.count)))
      : Self.refusal(bytes: bytes.count)
    // The deadline counts from the rescue's start, not from before the source was written.
    let deadline = timeout.map { ContinuousClock.now + $0 }
    do {
      _ = try ImageRescuer(configuration: configuration).rescue(
        file: source, refusedWith: refusal, to: scratch.path + "/out", deadline: deadline)
      return (nil, "", .now)
    } catch {
      return (error.code, error.message, .now)
    }
  }

  /// A progressive JPEG made by libvips' own tool, `width` × `height`, its bytes.
  static func progressiveJPEG(width: Int, height: Int) async throws -> [UInt8] {
    let scratch = try ScratchDirectory("progressive")
    defer { scratch.remove() }
    let path = scratch.path + "/p.jpg"
    let status = await ImageBombs.vips(["black", path + "[interlace,Q=80]", "\(width)", "\(height)"])
    try #require(status == 0, "vips black failed with \(status)")
    return try Array(Data(contentsOf: URL(fileURLWithPath: path)))
  }

  @Test("a progressive JPEG whose last scan repeats past the scan bound is refused before libvips decodes it")
  func repeatedScans() async throws {
    // Given a real progressive JPEG (that rescues), and the same with its last scan repeated 150
    // more times (libjpeg consumes all of them in one uninterruptible call: about 24 ms a scan
    // at 225 MP in the review)
    let jpeg = try await Self.progressiveJPEG(width: 640, height: 480)
    let plain = try Self.rescue(jpeg, name: "plain.jpg")
    #expect(plain.code == nil, "the plain progressive JPEG must still rescue: \(plain.message)")
    let bomb = try #require(ImageBombs.repeatingLastScan(jpeg, extra: 150))

    // When the bomb is rescued
    let answer = try Self.rescue(bomb, name: "bomb.jpg")

    // Then it is refused as too complex, naming the scan bound
    #expect(answer.code == .tooComplex)
    #expect(answer.message.contains("more than 100 scans"), "\(answer.message)")
  }

  @Test(
    "a progressive JPEG over the progressive pixel budget is refused (its decoder holds every coefficient)")
  func progressivePixels() async throws {
    // Given a progressive JPEG of 4000 × 3000 and a progressive budget of 10 MP (the default
    // is 50 MP: a source past it takes ~200 MiB to decode), and the same pixels baseline
    let jpeg = try await Self.progressiveJPEG(width: 4000, height: 3000)
    var configuration = RescueConfiguration()
    configuration.maximumProgressivePixels = 10_000_000

    // When it is rescued
    let answer = try Self.rescue(jpeg, name: "big.jpg", configuration: configuration)

    // Then it is refused with too_many_pixels naming the progressive budget
    #expect(answer.code == .tooManyPixels)
    #expect(answer.message.contains("progressive"), "\(answer.message)")
  }

  @Test("an animated WebP over the frame bound is refused before any frame is decoded")
  func tooManyFrames() throws {
    // Given the bundled animated WebP's frame (64 × 48) repeated 2,500 times: 7.7 MP in all,
    // far under the pixel budget
    let still = try Samples.bytes("webp-lossy.webp")
    let bomb = try #require(ImageBombs.animatedWebP(still: still, width: 64, height: 48, frames: 2_500))

    // When it is rescued
    let answer = try Self.rescue(bomb, name: "frames.webp")

    // Then it is refused as too complex, naming the frames
    #expect(answer.code == .tooComplex)
    #expect(answer.message.contains("2500 frames"), "\(answer.message)")
  }
}

extension ImageRescueBombTests {
  @Test(
    "an animation whose frames hold more pixels in all than the animation budget is refused before decoding")
  func animationSourceBudget() async throws {
    // Given 1,000 frames of 256 × 256 (65.5 MP in all, under the 256 MP still budget and the
    // 2,000-frame bound, over the 64 MP animation budget: decoding is ~20 MP/s of WebP here)
    let scratch = try ScratchDirectory("budget")
    defer { scratch.remove() }
    let made = await ImageBombs.animatedWebP(vips: "black", side: 256, frames: 1_000, in: scratch.path)
    let bomb = try #require(made)

    // When it is rescued
    let answer = try Self.rescue(bomb, name: "budget.webp")

    // Then it is refused as too complex, naming the animation budget
    #expect(answer.code == .tooComplex)
    #expect(answer.message.contains("for animations"), "\(answer.message)")
  }
}

/// It needs the process's image-rescue gate for the whole of its deadline (a holder there would
/// make it wait instead of being stopped): the rescue turn (``RescueTurnTrait``) keeps every other
/// in-process rescue out meanwhile.
extension ImageRescueBombTests {
  @Test(
    "a rescue that runs past its deadline is stopped there: its worker killed, deadline_exceeded at the deadline"
  )
  func stoppedAtDeadline() async throws {
    // Given an animation within every bound (the 64 MP animation budget) that takes libvips
    // seconds to convert here (900 frames of 256 × 256 noise, 59 MP), long enough for its
    // worker to be seen with the job on a far faster machine
    let scratch = try ScratchDirectory("noise")
    defer { scratch.remove() }
    let made = await ImageBombs.animatedWebP(
      vips: "gaussnoise", side: 256, options: "[Q=30]", frames: 900, in: scratch.path)
    let bomb = try #require(made)
    let source = scratch.path + "/slow.webp"
    try writeTestFile(Data(bomb), to: source)
    let refusal = Refusal(
      AttachmentError(.unsupportedType, "WebP is not accepted.", detected: "image/webp"),
      facts: MediaFacts(bytes: Int64(bomb.count)))

    // When it is rescued with a deadline 3 s away, and its worker is stopped (SIGSTOP) as soon
    // as it holds the job's output, so that the conversion cannot finish however fast this
    // machine is (before workers, libvips' own kill flag stopped it, and under a loaded run it
    // came 23 s late; the worker's kill does not depend on where libvips is)
    let deadline = ContinuousClock.now + .seconds(3)
    async let stopped = StoppedWorkers.stopWorking(
      below: getpid(), library: "libvips", outputUnder: scratch.path, within: .seconds(3))
    let answer = await onOwnThread { () -> AttachmentError? in
      do throws(AttachmentError) {
        _ = try ImageRescuer().rescue(
          file: source, refusedWith: refusal, to: scratch.path + "/out", deadline: deadline)
        return nil
      } catch {
        return error
      }
    }
    let late = deadline.duration(to: .now)
    let worker = try #require(await stopped, "no libvips worker had the job before the deadline")
    defer { kill(worker, SIGCONT) }

    // Then it is not delivered late but stopped at the deadline: deadline_exceeded, the worker
    // named as stopped, and the stopped worker gone (only a kill ends a stopped process)
    #expect(answer?.code == .deadlineExceeded, "\(String(describing: answer))")
    #expect(answer?.message.contains("its worker was stopped") == true, "\(String(describing: answer))")
    #expect(late < deadlineMargin, "answered \(late) after the deadline")
    #expect(await StoppedWorkers.isGone(worker), "the stopped worker was not killed at the deadline")
  }
}
