import Foundation
import TestSupport
import TestTraits
import Testing

@testable import AttachmentKit

/// Issue 42 (measured on other projects' test files): a file of an accepted video type whose
/// structure the probes refuse, but FFmpeg decodes whole, is a near-miss like a foreign
/// container: with rescue on it is transcoded from what FFmpeg reads. A file cut short stays
/// refused: that is an origin's fault no rescue undoes.
@Suite("Media rescue: an accepted type with a structure not valid", .cpuBound)
struct MalformedMediaRescueTests {
  @Test("an MPEG-1 stream with a reserved frame rate code is transcoded at the rate FFmpeg reads")
  func reservedFrameRate() async throws {
    let scratch = try ScratchDirectory("malformed-media")
    defer { scratch.remove() }
    let source = Samples.path("mpeg1-reserved-rate.m1v")
    let refusal = try #require(MediaRescuerTests.refusal(of: source), "accepted as it is")
    #expect(refusal.reason == .unsupportedFormat)
    #expect(refusal.format == "video/mpeg")
    let rescuer = MediaRescuer()
    #expect(rescuer.canRescue(refusal))

    let output = scratch.path + "/out"
    let bytes = MediaRescuerTests.size(source)
    let rescue = try await onOwnThread { () throws -> Rescue in
      try rescuer.rescue(
        RescueJob(
          source: source, bytes: bytes, refusal: refusal, output: output, limits: ValidationLimits(),
          deadline: .now + .seconds(20)))
    }
    let delivered = try Validator().validate(file: output)
    #expect(delivered.type == .mp4)
    #expect(rescue.actions == [.transcoded])
    #expect(delivered.width == 160 && delivered.height == 120)
    // 50 frames at the 15 fps FFmpeg reads code 9 as (Xing's rate).
    #expect(abs((delivered.durationSeconds ?? 0) - 50.0 / 15) < 0.1, "\(delivered.durationSeconds ?? 0)")
  }

  @Test("files cut short keep their refusal with every standard rescuer")
  func truncatedStaysRefused() throws {
    let rescuers = StandardRescuers.make()
    for file in [
      "truncated-jpeg-no-eoi.jpg", "truncated-png-no-iend.png", "truncated-gif-no-trailer.gif",
      "truncated-mp4-mdat.mp4", "truncated-tiff-ifd-past-eof.tiff",
    ] {
      let refusal = try #require(MediaRescuerTests.refusal(of: Samples.path(file)), "\(file) is accepted")
      #expect(refusal.error.code == .truncated, "\(file): \(refusal.error.code)")
      #expect(rescuers.allSatisfy { !$0.canRescue(refusal) }, "\(file) would be rescued")
    }
  }
}
