import TestTraits
import Testing

@testable import AttachmentKit

/// Issue 18: the decodability table, row by row, and the rules that turn it into a verdict.
@Suite("Codec decodability table and verdicts", .cpuBound)
struct CodecTableTests {
  /// What a row's support is, without its caveat.
  enum Expected: String, Sendable {
    case decodes, depends, doesNotDecode, notPlayed
  }

  /// Every row of the table and the verdict it must give; a row added to the table without a
  /// line here fails `everyRowIsListed`.
  static let expectations: [String: Expected] = [
    "avc1": .decodes, "avc3": .decodes, "hvc1": .decodes, "hev1": .decodes, "mp4v.20": .decodes,
    "mp4v.6A": .decodes, "mp4v.60": .decodes, "mp4v.61": .decodes, "mp4v.62": .decodes, "mp4v.63": .decodes,
    "mp4v.64": .decodes, "mp4v.65": .decodes, "jpeg": .decodes, "mp4v": .decodes, "mp4a": .decodes,
    "av01": .depends, "dav1": .depends, "dvh1": .depends, "dvhe": .depends,
    "vp08": .doesNotDecode, "vp09": .doesNotDecode, "vvc1": .doesNotDecode, "vvi1": .doesNotDecode,
    "encv": .doesNotDecode,
    "mp4a.40.2": .decodes, "mp4a.40.5": .decodes, "mp4a.40.29": .decodes, "mp4a.40.23": .decodes,
    "mp4a.40.39": .decodes, "mp4a.40.34": .decodes, "mp4a.67": .decodes, "mp4a.6B": .decodes,
    "mp4a.69": .decodes, "mp3": .decodes, "alac": .decodes, "ac-3": .decodes, "mp4a.A5": .decodes,
    "ec-3": .decodes, "mp4a.A6": .decodes, "lpcm": .decodes, "sowt": .decodes, "twos": .decodes,
    "raw": .decodes, "in24": .decodes, "in32": .decodes, "fl32": .decodes, "fl64": .decodes,
    "ulaw": .decodes, "alaw": .decodes, "ima4": .decodes,
    "1": .decodes, "3": .decodes, "6": .decodes, "7": .decodes, "17": .decodes, "85": .decodes,
    "opus": .depends, "mp4a.AD": .depends, "flac": .depends, "fpcm": .depends, "ipcm": .depends,
    "mp4a.40.42": .depends,
    "mp1": .doesNotDecode, "mp2": .doesNotDecode,
    "2": .doesNotDecode, "65534": .doesNotDecode, "dtsc": .doesNotDecode, "dtsh": .doesNotDecode,
    "dtsl": .doesNotDecode,
    "dtse": .doesNotDecode, "dtsx": .doesNotDecode, "mlpa": .doesNotDecode, "ac-4": .doesNotDecode,
    "mha1": .doesNotDecode, "mhm1": .doesNotDecode, "iamf": .doesNotDecode, "enca": .doesNotDecode,
    "tx3g": .notPlayed, "text": .notPlayed, "wvtt": .notPlayed, "stpp": .notPlayed, "c608": .notPlayed,
    "c708": .notPlayed, "tmcd": .notPlayed, "mebx": .notPlayed, "subp": .notPlayed,
  ]

  static func verdict(_ codec: String) -> Expected {
    switch CodecTable.support(of: MediaStream(kind: .audio, codec: codec)) {
    case .decodes: .decodes
    case .dependsOnDevice: .depends
    case .doesNotDecode: .doesNotDecode
    case .notPlayed: .notPlayed
    }
  }

  @Test("every row of the table gives its verdict", arguments: expectations.keys.sorted())
  func row(_ codec: String) throws {
    #expect(Self.verdict(codec) == Self.expectations[codec])
    let row = try #require(CodecTable.row(for: codec))
    #expect(!row.name.isEmpty)
    if case .dependsOnDevice(let caveat) = row.support { #expect(!caveat.isEmpty) }
  }

  @Test("every row of the table is listed in this test")
  func everyRowIsListed() {
    #expect(Set(CodecTable.rows.keys) == Set(Self.expectations.keys))
  }

  @Test(
    "full codecs strings fall back to their family; unknown ones and unknown object types do not decode",
    arguments: [
      ("avc1.64001F", Expected.decodes), ("hvc1.1.6.L93.B0", .decodes), ("av01.0.04M.08", .depends),
      ("vp09.00.10.08", .doesNotDecode), ("mp4v.20.9", .decodes), ("mp4a.40.7", .doesNotDecode),
      ("mp4a.DD", .doesNotDecode), ("mp4a.40", .doesNotDecode), ("wxyz", .doesNotDecode),
      ("17", .decodes), ("170", .doesNotDecode),
    ])
  func prefixes(_ codec: String, _ expected: Expected) {
    #expect(Self.verdict(codec) == expected)
  }

  @Test("a video is refused only when no video track decodes, with the codec in words and in detected")
  func videoVerdicts() throws {
    let vp9 = MediaStream(kind: .video, codec: "vp09.00.10.08")
    let h264 = MediaStream(kind: .video, codec: "avc1.64001F")
    let aac = MediaStream(kind: .audio, codec: "mp4a.40.2")
    let dts = MediaStream(kind: .audio, codec: "dtsc")
    // VP9 alone, even with AAC audio: refused.
    guard case .failure(let error) = CodecCheck.judge([vp9, aac], type: .mp4) else {
      Issue.record("VP9 video accepted")
      return
    }
    #expect(error.code == .unsupportedCodec && error.isRejection)
    #expect(error.message == "The video is VP9 video, which iOS does not decode.")
    #expect(error.detected == "video/mp4; codecs=\"vp09.00.10.08\"")
    // VP9 next to an H.264 track: accepted, the VP9 track a warning.
    let mixed = try CodecCheck.judge([h264, vp9], type: .mp4).get()
    #expect(mixed.count == 1 && mixed[0].contains("VP9 video") && mixed[0].contains("does not decode"))
    // Undecodable audio in a decodable video: a warning.
    let withDTS = try CodecCheck.judge([h264, dts], type: .mov).get()
    #expect(withDTS == ["One audio track is DTS audio (dtsc), which iOS does not decode: it will not play."])
    // AV1 alone: accepted with a warning that says which devices.
    let av1 = try CodecCheck.judge([MediaStream(kind: .video, codec: "av01.0.04M.08")], type: .mp4).get()
    #expect(av1.count == 1 && av1[0].contains("A17 Pro"))
  }

  @Test("audio is refused only when no audio track decodes; other tracks only warn when unknown")
  func audioVerdicts() throws {
    let truehd = MediaStream(kind: .audio, codec: "mlpa")
    let dts = MediaStream(kind: .audio, codec: "dtsc")
    guard case .failure(let error) = CodecCheck.judge([truehd, dts], type: .m4a) else {
      Issue.record("TrueHD + DTS accepted")
      return
    }
    #expect(error.message == "The audio is Dolby TrueHD audio and DTS audio, which iOS does not decode.")
    #expect(error.detected == "audio/mp4; codecs=\"mlpa, dtsc\"")
    let second = try CodecCheck.judge([MediaStream(kind: .audio, codec: "mp4a.40.2"), dts], type: .m4a).get()
    #expect(second.count == 1)
    let text = try CodecCheck.judge(
      [MediaStream(kind: .audio, codec: "ac-3"), MediaStream(kind: .other, codec: "tx3g")], type: .m4a
    ).get()
    #expect(text.isEmpty)
    let unknown = try CodecCheck.judge(
      [MediaStream(kind: .audio, codec: "ec-3"), MediaStream(kind: .other, codec: "abcd")], type: .m4a
    ).get()
    #expect(unknown.count == 1 && unknown[0].contains("neither audio nor video"))
    // A movie without a video track is judged by its audio.
    guard case .failure(let movie) = CodecCheck.judge([dts], type: .mov) else {
      Issue.record("an audio-only QuickTime movie of DTS accepted")
      return
    }
    #expect(movie.detected == "video/quicktime; codecs=\"dtsc\"")
    #expect(
      movie.message == "The movie has no video track, and its audio is DTS audio, which iOS does not decode.")
    // A file whose probe names no stream of its category is not judged (images, bare streams).
    #expect(try CodecCheck.judge([], type: .mp4).get().isEmpty)
    #expect(try CodecCheck.judge([truehd], type: .jpeg).get().isEmpty)
  }
}
