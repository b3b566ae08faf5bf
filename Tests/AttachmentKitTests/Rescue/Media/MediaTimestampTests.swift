import Foundation
import TestSupport
import TestTraits
import Testing

@testable import AttachmentKit

/// Issue 52, item 4: 3 of 475 rescued outputs of a fuzz run decoded with "non monotonically
/// increasing dts" (`ffmpeg -v error -i OUT -f null -`): a stream copy of an HEVC MP4 whose
/// edit list hides packets (they were copied and shown: 1.0 s became 2.067 s), and transcodes
/// of an ASF with irregular frame times and of an MPEG-1 program stream whose last frame has
/// no timestamp. Each is now either refused with its code or delivered decoding cleanly, no
/// longer than its source.
@Suite("Media rescue: timestamps never go backwards", .rescueTurn, .threadOfItsOwn)
struct MediaTimestampTests {
  /// A fuzzed sample and its source's duration in seconds.
  struct Case: Sendable, CustomTestStringConvertible {
    let file: String
    let sourceSeconds: Double
    var testDescription: String { file }
  }

  static let cases = [
    Case(file: "mp4-hevc-hidden-packets.mp4", sourceSeconds: 1.0),
    Case(file: "asf-wmv2-irregular-times.wmv", sourceSeconds: 1.092),
    Case(file: "mpeg1-ps-untimed-last-frame.mpg", sourceSeconds: 2.011),
  ]

  /// What `ffmpeg -v error -i path -f null -` writes to standard error (empty: it decodes cleanly).
  static func decodeErrors(_ path: String) async throws -> String {
    try await onOwnThread { () throws -> String in
      let process = Process()
      process.executableURL = URL(fileURLWithPath: "/usr/bin/ffmpeg")
      process.arguments = ["-nostdin", "-v", "error", "-i", path, "-f", "null", "-"]
      process.standardInput = FileHandle.nullDevice
      process.standardOutput = FileHandle.nullDevice
      let errors = Pipe()
      process.standardError = errors
      try process.runClosingChildEnds()
      let text = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
      process.blockUntilExit()
      process.closeStandardPipes()
      return text
    }
  }

  @Test(
    "a rescue of a fuzzed file with timestamps that went backwards is refused with its code, or decodes cleanly at a sane length",
    arguments: cases)
  func neverBackwards(_ sample: Case) async throws {
    let scratch = try ScratchDirectory("media-timestamps")
    defer { scratch.remove() }
    let output = scratch.path + "/out"
    let result = await onOwnThread {
      Result { () throws(AttachmentError) -> Validation in
        try StandardRescuers.make().attachment(
          fromFile: Samples.repro(sample.file), rescuingInto: output, limits: ValidationLimits(),
          deadline: .now + .seconds(20))
      }
    }
    switch result {
    case .failure(let error):
      // A refusal names why: the original's code, with what the rescue could not do
      #expect(
        [.unsupportedType, .unsupportedCodec].contains(error.code) && error.message.contains("Not rescued"),
        "\(error)")
      #expect(!FileManager.default.fileExists(atPath: output))
    case .success(let validation):
      #expect(validation.rescued != nil, "the fuzzed file was delivered as it is")
      let errors = try await Self.decodeErrors(output)
      #expect(errors.isEmpty, "\(errors.prefix(600))")
      let seconds = try #require(validation.durationSeconds)
      #expect(
        seconds > 0 && seconds <= sample.sourceSeconds + 0.1, "\(seconds) s from \(sample.sourceSeconds) s")
    }
  }
}
