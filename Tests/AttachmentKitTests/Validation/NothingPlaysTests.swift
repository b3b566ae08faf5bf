import Foundation
import TestTraits
import Testing

@testable import AttachmentKit

/// Issue 27, "accepted, but nothing plays": MP4 / M4A files with no track of their category,
/// audio sample entries that describe nothing, and sample tables that point outside the media
/// data are refused; what decoders still play is accepted.
@Suite("Files in which nothing plays", .cpuBound)
struct NothingPlaysTests {
  /// The offset of the first box of type `type` in `bytes` (its size field), when there is one.
  static func box(_ type: String, in bytes: [UInt8]) throws -> Int {
    let name = Array(type.utf8)
    let at = try #require((4..<(bytes.count - 4)).first { Array(bytes[$0..<$0 + 4]) == name })
    return at - 4
  }

  /// `bytes` with `count` bytes at `offset` replaced by zeros.
  static func zeroing(_ bytes: [UInt8], at offset: Int, count: Int) -> [UInt8] {
    var edited = bytes
    edited.replaceSubrange(offset..<offset + count, with: [UInt8](repeating: 0, count: count))
    return edited
  }

  /// The refusal of `bytes`, or nil (recorded as an issue) when they are accepted.
  static func refusal(_ bytes: [UInt8], as name: String) throws -> AttachmentError? {
    switch try DurationTests.validate(bytes, as: name) {
    case .success(let validation):
      Issue.record("accepted: \(validation)")
      return nil
    case .failure(let error):
      return error
    }
  }

  @Test(
    "an MP4 or M4A with no track, or only a text track, is refused: no codecs, nothing plays",
    arguments: ["M4A ", "isom", "qt  "])
  func noTrackOfItsCategory(brand: String) throws {
    let empty = ProbeFixtures.movie(major: brand, compatible: [brand], video: false, audio: false)
    let error = try #require(try Self.refusal(empty, as: "no-track.m4a"))
    // Before issue 27 this was accepted as M4A (or MOV) with empty codecs and a duration of 2 s.
    #expect(error.code == .unsupportedType && error.isRejection)
    #expect(error.message.contains("neither a video nor an audio track"), "\(error.message)")

    var onlyText = ProbeFixtures.ftyp(brand, [brand]) + ProbeFixtures.box("mdat", ProbeFixtures.fill(16, 1))
    let text = ProbeFixtures.trak(
      id: 1, handler: "text", codec: "tx3g", timescale: 1_000, duration: 2_000,
      chunkOffsets: [onlyText.count - 16])
    onlyText += ProbeFixtures.box("moov", ProbeFixtures.mvhd(timescale: 1_000, duration: 2_000) + text)
    let textError = try #require(try Self.refusal(onlyText, as: "text-only.mp4"))
    #expect(textError.code == .unsupportedType)
  }

  @Test("an audio sample entry with no channels and no sample rate, and no configuration, does not decode")
  func undescribedSampleEntry() throws {
    // The fixture's mp4a entry carries no esds: its fields are all there is.
    let movie = ProbeFixtures.movie(major: "M4A ", compatible: ["M4A ", "isom"], video: false, audio: true)
    _ = try DurationTests.validate(movie, as: "described.m4a").get()
    let entry = try Self.box("mp4a", in: movie)
    // AudioSampleEntry payload: channelcount at +16, samplesize +18, samplerate (16.16) at +24.
    let zeroed = Self.zeroing(Self.zeroing(movie, at: entry + 8 + 16, count: 4), at: entry + 8 + 24, count: 4)
    let error = try #require(try Self.refusal(zeroed, as: "undescribed.m4a"))
    #expect(error.code == .unsupportedCodec && error.isRejection)
    #expect(error.message.contains("gives no channel count or sample rate"), "\(error.message)")
    #expect(error.detected == "audio/mp4; codecs=\"mp4a\"")
  }

  @Test("a real M4A: zero entry fields next to a valid esds play; a wholly zeroed entry does not")
  func zeroedEntryOfARealFile() throws {
    let original = try Samples.bytes("aac-m4a.m4a")
    let entry = try Self.box("mp4a", in: original)
    // ffmpeg 5.1 decodes this one (it takes channels and rate from the esds AudioSpecificConfig).
    let fields = Self.zeroing(
      Self.zeroing(original, at: entry + 8 + 16, count: 4), at: entry + 8 + 24, count: 4)
    let accepted = try DurationTests.validate(fields, as: "zero-fields.m4a").get()
    #expect(accepted.codecs == ["mp4a.40.2"])
    // Every byte of the entry after its header zeroed, esds included: ffmpeg 5.1 answers
    // "Neither number of channels nor channel layout specified" and decodes nothing.
    let size =
      Int(original[entry]) << 24 | Int(original[entry + 1]) << 16 | Int(original[entry + 2]) << 8
      | Int(original[entry + 3])
    let whole = Self.zeroing(original, at: entry + 8, count: size - 8)
    let error = try #require(try Self.refusal(whole, as: "zero-entry.m4a"))
    #expect(error.code == .unsupportedCodec)
  }

  @Test("chunk offsets pointing into the mdat header, or samples larger than the media data, are refused")
  func sampleTableOutsideTheMediaData() throws {
    let original = try Samples.bytes("aac-m4a.m4a")
    _ = try DurationTests.validate(original, as: "original.m4a").get()
    let mdat = try Self.box("mdat", in: original)
    let stco = try Self.box("stco", in: original)
    let count =
      Int(original[stco + 12]) << 24 | Int(original[stco + 13]) << 16 | Int(original[stco + 14]) << 8
      | Int(original[stco + 15])
    let first =
      Int(original[stco + 16]) << 24 | Int(original[stco + 17]) << 16 | Int(original[stco + 18]) << 8
      | Int(original[stco + 19])
    // Every chunk moved back so the first starts at the mdat's size field: ffmpeg 5.1 decodes
    // garbage ("Number of bands exceeds limit", "Invalid data found when processing input").
    var shifted = original
    for index in 0..<count {
      let at = stco + 16 + 4 * index
      let value =
        Int(original[at]) << 24 | Int(original[at + 1]) << 16 | Int(original[at + 2]) << 8
        | Int(original[at + 3])
      shifted.replaceSubrange(at..<at + 4, with: ProbeFixtures.be32(value - (first - mdat)))
    }
    let error = try #require(try Self.refusal(shifted, as: "stco-in-header.m4a"))
    #expect(error.code == .unsupportedType)
    #expect(error.message.contains("chunk at offset \(mdat), outside the media data"), "\(error.message)")

    // One stsz entry overstated to 1 MB, far more than the file: ffmpeg 5.1 reads past the
    // sample into the next ones ("invalid band type").
    let stsz = try Self.box("stsz", in: original)
    var oversized = original
    oversized.replaceSubrange(stsz + 20..<stsz + 24, with: ProbeFixtures.be32(1_000_000))
    let sizeError = try #require(try Self.refusal(oversized, as: "stsz-oversized.m4a"))
    #expect(sizeError.code == .unsupportedType)
    #expect(sizeError.message.contains("more than the"), "\(sizeError.message)")
  }
}
