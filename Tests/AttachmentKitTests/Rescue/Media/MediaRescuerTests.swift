import Foundation
import TestTraits
import Testing

@testable import AttachmentKit

/// The media rescuer on the bundled samples, each row of its table: the source is refused as
/// it is, rescued with FFmpeg's libraries, and what it delivers passes the ordinary validator.
@Suite("Media rescue: each kind of source", .rescueTurn, .threadOfItsOwn)
struct MediaRescuerTests {
  @Test(
    "a refused video or audio sample is delivered as a file the validator accepts, with the actions its row names",
    arguments: [
      ("matroska.mkv", MediaType.mp4, ["rewrapped"]),
      ("webm-vp9.webm", .mp4, ["transcoded"]),
      ("avi-mpeg4.avi", .mp4, ["transcoded"]),
      ("mp4-vp9-aac.mp4", .mp4, ["transcoded"]),
      ("flac-audio.flac", .m4a, ["transcoded"]),
      ("ogg-opus.opus", .m4a, ["transcoded"]),
      ("wav-ms-adpcm.wav", .m4a, ["transcoded"]),
      ("m4a-dts.mp4", .m4a, ["transcoded"]),
      ("m4a-truehd.mp4", .m4a, ["transcoded"]),
      ("mpegts-pat-first.ts", .mp4, ["rewrapped"]),
      ("mpegts-sdt-first.ts", .mp4, ["rewrapped"]),
      ("mpegts-h264-aac.ts", .mp4, ["rewrapped"]),
      ("m2ts-h264-ac3.mts", .mp4, ["rewrapped"]),
      ("mpegts-204.ts", .mp4, ["rewrapped"]),
      ("3gp-h263-aac.3gp", .mp4, ["transcoded"]),
      ("3gp-h263-amr.3gp", .mp4, ["transcoded"]),
      ("flv-sorenson.flv", .mp4, ["transcoded"]),
      ("asf-wmv2.wmv", .mp4, ["transcoded"]),
      ("avi-msmpeg4v2.avi", .mp4, ["transcoded"]),
      ("ogg-speex.spx", .m4a, ["transcoded"]),
      ("amr-nb.amr", .m4a, ["transcoded"]),
      ("ac3-raw.ac3", .m4a, ["rewrapped"]),
    ])
  func rescuesEachRow(file: String, type: MediaType, actions: [String]) throws {
    let scratch = try ScratchDirectory("media-rescue")
    defer { scratch.remove() }
    let source = Samples.path(file)
    let refusal = try #require(Self.refusal(of: source), "\(file) is accepted as it is")
    let rescuer = MediaRescuer()
    #expect(rescuer.canRescue(refusal) || refusal.reason == .tooLong)

    let output = scratch.path + "/out"
    let rescue = try rescuer.rescue(
      RescueJob(
        source: source, bytes: Self.size(source), refusal: refusal, output: output,
        limits: ValidationLimits(),
        deadline: .now + .seconds(20)))

    let delivered = try Validator().validate(file: output)
    #expect(delivered.type == type, "\(file): \(delivered.type)")
    #expect(rescue.actions.map(\.rawValue) == actions, "\(file)")
    #expect(rescue.rescuer == "media")
    // Only CAF's own note: iOS plays it, outside Apple's published table.
    #expect(delivered.warnings.allSatisfy { $0.contains("outside Apple") }, "\(file): \(delivered.warnings)")
    #expect(abs((delivered.durationSeconds ?? 0) - (rescue.originalDurationSeconds ?? 0)) < 0.1, "\(file)")
  }

  /// The validator's refusal of `path`, with what it measured; `nil` when it is accepted.
  static func refusal(of path: String) -> Refusal? {
    do {
      _ = try Validator().judge(file: path)
      return nil
    } catch {
      return error
    }
  }

  static func size(_ path: String) -> Int64 {
    ((try? FileManager.default.attributesOfItem(atPath: path)[.size]) as? NSNumber)?.int64Value ?? 0
  }
}
