import Foundation
import Testing

@testable import AttachmentKit

/// The media rescue's failure paths, each taken again and again: an encoder that does not open
/// (after the decoder and a frame were made), and a file that cannot be written (after every
/// decoder, encoder, scaler, resampler and FIFO were made). Each must give its refusal every
/// time and free what it made: run under `scripts/sanitize.sh --filter MediaFailurePath
/// address`, LeakSanitizer fails the process on any allocation of theirs left unreachable.
/// One rescue turn (``RescueTurnTrait``): no other suite's rescue waits behind these loops.
@Suite("Media rescue: failure paths free what they made", .rescueTurn, .threadOfItsOwn)
struct MediaFailurePathTests {
  /// How many times each path is taken (LeakSanitizer reports a leak of one).
  static let rounds = 20

  private static func rescue(
    _ file: String, output: String, configuration: MediaRescueConfiguration = MediaRescueConfiguration()
  ) throws -> AttachmentError? {
    let source = Samples.path(file)
    let refusal = try #require(MediaRescuerTests.refusal(of: source))
    do {
      _ = try MediaRescuer(configuration: configuration).rescue(
        RescueJob(
          source: source, bytes: MediaRescuerTests.size(source), refusal: refusal, output: output,
          limits: ValidationLimits(), deadline: .now + .seconds(20)))
      return nil
    } catch {
      return error
    }
  }

  @Test("an x264 preset that does not exist: the encoder does not open, each time")
  func encoderDoesNotOpen() throws {
    let scratch = try ScratchDirectory("media-encoder-fails")
    defer { scratch.remove() }
    var configuration = MediaRescueConfiguration()
    configuration.videoPreset = "no-such-preset"
    for _ in 0..<Self.rounds {
      let error = try Self.rescue(
        "webm-vp9.webm", output: scratch.path + "/out.mp4", configuration: configuration)
      #expect(error?.code == .unsupportedType, "\(String(describing: error))")
      #expect(error?.message.contains("Not rescued: its encoder does not open") == true)
    }
  }

  @Test(
    "an output in a missing directory: io_error after the video or audio transcoder was made, each time",
    arguments: ["webm-vp9.webm", "flac-audio.flac", "mp4-vp9-aac.mp4"])
  func outputCannotBeWritten(file: String) throws {
    let scratch = try ScratchDirectory("media-output-fails")
    defer { scratch.remove() }
    for _ in 0..<Self.rounds {
      let error = try Self.rescue(file, output: scratch.path + "/missing/out")
      #expect(error?.code == .ioError, "\(file): \(String(describing: error))")
    }
    #expect(!FileManager.default.fileExists(atPath: scratch.path + "/missing"))
  }
}
