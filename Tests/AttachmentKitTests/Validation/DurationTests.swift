import Foundation
import TestSupport
import TestTraits
import Testing

@testable import AttachmentKit

/// Issue 13, item 3: a video's duration falls back to its tracks, fragments, time stamps or
/// bit rate, and a video whose duration cannot be established is refused, never let through.
@Suite("Video durations: fallbacks and unknown_duration", .cpuBound)
struct DurationTests {
  /// `bytes` with the timescale of the first mvhd (version 0 or 1) set to 0.
  static func zeroingMovieTimescale(_ bytes: [UInt8]) throws -> [UInt8] {
    let name = Array("mvhd".utf8)
    let at = try #require((0..<(bytes.count - 4)).first { Array(bytes[$0..<$0 + 4]) == name })
    let payload = at + 4
    let scale = payload + (bytes[payload] == 1 ? 20 : 12)
    var edited = bytes
    edited.replaceSubrange(scale..<scale + 4, with: [0, 0, 0, 0])
    return edited
  }

  /// Writes `bytes` to a scratch file and validates it.
  static func validate(_ bytes: [UInt8], as name: String) throws -> Result<Validation, AttachmentError> {
    let scratch = try ScratchDirectory("duration")
    defer { scratch.remove() }
    let path = scratch.path + "/" + name
    try writeTestFile(Data(bytes), to: path)
    do {
      return .success(try Validator().validate(file: path))
    } catch {
      return .failure(error)
    }
  }

  @Test("a 45 s MP4 whose only mvhd timescale is zeroed is too long (track durations)")
  func zeroTimescaleFixture() throws {
    let movie = try Self.zeroingMovieTimescale(ProbeFixtures.movie(seconds: 45))
    let report = try MediaProbe.inspect(file: FileBytes(bytes: movie), as: .isoBMFF).get()
    #expect(report.durationSeconds == 45)
    let result = try Self.validate(movie, as: "zero-timescale.mp4")
    guard case .failure(let error) = result else {
      Issue.record("accepted: \(result)")
      return
    }
    #expect(error.code == .tooLong && error.message.contains("45.0 s"))
  }

  @Test("the real 40 s sample with its mvhd timescale zeroed is still too long (mdhd)")
  func zeroTimescaleSample() throws {
    let movie = try Self.zeroingMovieTimescale(try Samples.bytes("too-long-video-40s.mp4"))
    let result = try Self.validate(movie, as: "zero-timescale-40s.mp4")
    guard case .failure(let error) = result else {
      Issue.record("accepted: \(result)")
      return
    }
    #expect(error.code == .tooLong && error.isRejection)
    #expect(error.message.contains("40.0 s"))
  }

  @Test(
    "a movie with no duration anywhere (mvhd, mehd, fragments, mdhd, tkhd) is refused with unknown_duration")
  func unknownISODuration() throws {
    let movie = try Self.zeroingMovieTimescale(ProbeFixtures.movie(seconds: 0))
    let result = try Self.validate(movie, as: "no-duration.mp4")
    guard case .failure(let error) = result else {
      Issue.record("accepted: \(result)")
      return
    }
    #expect(error.code == .unknownDuration && error.isRejection)
    #expect(error.message.contains("cannot be established"))
  }

  /// A program stream of two packs whose video packets carry no PTS (the SCRs are all 0), with
  /// the mux rate of `packHeader` (25,200 × 50 bytes/s) or, with `zeroRate`, none.
  static func programStreamWithoutStamps(zeroRate: Bool) -> [UInt8] {
    var bytes: [UInt8] = []
    for index in 0..<2 {
      var pack = ProbeFixtures.packHeader(clock: 0)
      if zeroRate { pack.replaceSubrange(10..<13, with: [0x00, 0x00, 0x03]) }
      bytes += pack
      let payload = (index == 0 ? ProbeFixtures.sequenceHeader() : []) + ProbeFixtures.picture
      bytes += [0, 0, 1, 0xE0] + ProbeFixtures.be16(3 + payload.count) + [0x80, 0x00, 0x00] + payload
    }
    return bytes + [0, 0, 1, 0xB9]
  }

  @Test("an MPEG program stream without time stamps gets its duration from the mux rate, or is refused")
  func programStreamFallback() throws {
    let stream = Self.programStreamWithoutStamps(zeroRate: false)
    let validation = try Self.validate(stream, as: "no-pts.mpg").get()
    let expected = Double(stream.count) / (25_200 * 50)
    #expect(abs((validation.durationSeconds ?? -1) - expected) < 1e-9)
    #expect(validation.warnings.contains { $0.contains("estimated from its mux rate") })
    let unknown = try Self.validate(Self.programStreamWithoutStamps(zeroRate: true), as: "no-rate.mpg")
    guard case .failure(let error) = unknown else {
      Issue.record("accepted: \(unknown)")
      return
    }
    #expect(error.code == .unknownDuration)
  }
}
