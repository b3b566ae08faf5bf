import TestTraits
import Testing

@testable import AttachmentKit

/// The RFC 6381 strings read from sample entries' configuration boxes, one parsing path each.
@Suite("ISO sample entry codecs strings", .cpuBound)
struct ISOSampleEntryTests {
  typealias F = ProbeFixtures

  /// The codec of a single sample entry of `type` whose children are `children`, in a track
  /// with `handler`; `audioVersion` is the QuickTime sound description version.
  static func codec(_ type: String, handler: String, audioVersion: Int = 0, _ children: [UInt8]) throws
    -> String
  {
    let fields: [UInt8] =
      handler == "vide"
      ? F.fill(6) + F.be16(1) + F.fill(16) + F.be16(160) + F.be16(120) + F.fill(50)
      : F.fill(6) + F.be16(1) + F.be16(audioVersion) + F.fill(6) + F.be16(2) + F.be16(16) + F.fill(4)
        + F.be32(48_000 << 16) + F.fill(audioVersion == 1 ? 16 : audioVersion == 2 ? 36 : 0)
    let entry = F.box(type, fields + children)
    let reader = ByteReader(bytes: entry)
    guard case .box(let box) = ISOBox.header(reader, at: 0, limit: entry.count) else {
      throw ProbeProblem.malformed("no box")
    }
    let code: UInt32
    switch handler {
    case "vide": code = ProbeMath.code("vide")
    case "soun": code = ProbeMath.code("soun")
    default: code = ProbeMath.code("text")
    }
    return ISOSampleEntry.codec(reader, box, handler: code)
  }

  /// An esds box with object type `objectType` and decoder-specific bytes `info`.
  static func esds(_ objectType: UInt8, info: [UInt8]) -> [UInt8] {
    let specific: [UInt8] = info.isEmpty ? [] : [0x05, UInt8(info.count)] + info
    let config: [UInt8] = [0x04, UInt8(13 + specific.count), objectType, 0x15] + F.fill(11) + specific
    let descriptor: [UInt8] = [0x03, 0x80, 0x80, 0x80, UInt8(3 + config.count), 0x00, 0x01, 0x00] + config
    return F.fullBox("esds", descriptor)
  }

  @Test("avcC gives avc1.PPCCLL")
  func avc() throws {
    #expect(
      try Self.codec("avc1", handler: "vide", F.box("avcC", [1, 0x64, 0x00, 0x1F, 0xFF])) == "avc1.64001F")
    #expect(try Self.codec("avc1", handler: "vide", []) == "avc1")  // no avcC: the bare entry
  }

  @Test("hvcC gives profile space, profile, reversed compatibility flags, tier, level and constraints")
  func hevc() throws {
    let main: [UInt8] = [1, 0x01, 0x60, 0, 0, 0, 0x90, 0, 0, 0, 0, 0, 93]
    #expect(try Self.codec("hvc1", handler: "vide", F.box("hvcC", main)) == "hvc1.1.6.L93.90")
    let high10: [UInt8] = [1, 0x62, 0x20, 0, 0, 0, 0xB0, 0, 0, 0, 0, 0, 120]
    #expect(try Self.codec("hev1", handler: "vide", F.box("hvcC", high10)) == "hev1.A2.4.H120.B0")
  }

  @Test("av1C gives profile, level with tier, and bit depth; vpcC profile, level and bit depth")
  func av1AndVP9() throws {
    #expect(try Self.codec("av01", handler: "vide", F.box("av1C", [0x81, 0x08, 0x40, 0])) == "av01.0.08M.10")
    #expect(try Self.codec("av01", handler: "vide", F.box("av1C", [0x81, 0x2D, 0xE0, 0])) == "av01.1.13H.12")
    let vpcC = F.fullBox("vpcC", version: 1, [2, 31, 0xA0, 0, 0, 0, 0, 0])
    #expect(try Self.codec("vp09", handler: "vide", vpcC) == "vp09.02.31.10")
  }

  @Test("esds gives the object type, the AAC audio object type (with its escape) and DTS by name")
  func esdsObjectTypes() throws {
    #expect(try Self.codec("mp4a", handler: "soun", Self.esds(0x40, info: [0x12, 0x10])) == "mp4a.40.2")
    #expect(try Self.codec("mp4a", handler: "soun", Self.esds(0x40, info: [0x2B, 0x8A])) == "mp4a.40.5")
    // Audio object type 31 escapes to 32 + 6 more bits: 32 + 2 = 34, MP3 as MPEG-4 audio.
    #expect(try Self.codec("mp4a", handler: "soun", Self.esds(0x40, info: [0xF8, 0x40])) == "mp4a.40.34")
    #expect(try Self.codec("mp4a", handler: "soun", Self.esds(0x6B, info: [])) == "mp4a.6B")
    #expect(try Self.codec("mp4a", handler: "soun", Self.esds(0xA5, info: [])) == "mp4a.A5")
    #expect(try Self.codec("mp4a", handler: "soun", Self.esds(0xA9, info: [])) == "dtsc")
    #expect(try Self.codec("mp4a", handler: "soun", Self.esds(0xAA, info: [])) == "dtsh")
    let visual = Self.esds(0x20, info: [0, 0, 1, 0xB0, 0x08])
    #expect(try Self.codec("mp4v", handler: "vide", visual) == "mp4v.20.8")
    // A broken esds leaves the bare entry name.
    #expect(try Self.codec("mp4a", handler: "soun", F.fullBox("esds", [0x03, 0x7F])) == "mp4a")
  }

  @Test("QuickTime sound descriptions v1 and v2 and the esds inside a wave box are read")
  func quickTimeAudio() throws {
    let wave = F.box("wave", F.box("frma", F.ascii("mp4a")) + Self.esds(0x40, info: [0x12, 0x10]))
    #expect(try Self.codec("mp4a", handler: "soun", audioVersion: 1, wave) == "mp4a.40.2")
    #expect(
      try Self.codec("mp4a", handler: "soun", audioVersion: 2, Self.esds(0x40, info: [0x13, 0x10]))
        == "mp4a.40.2")
  }

  @Test("entries without a long form give their four-character code, renamed where RFC 6381 says")
  func plainEntries() throws {
    #expect(try Self.codec("ac-3", handler: "soun", F.box("dac3", [0x10, 0x08, 0x80])) == "ac-3")
    #expect(try Self.codec("Opus", handler: "soun", []) == "opus")
    #expect(try Self.codec("fLaC", handler: "soun", []) == "flac")
    #expect(try Self.codec(".mp3", handler: "soun", []) == "mp3")
    #expect(try Self.codec("raw ", handler: "soun", []) == "raw")
    #expect(try Self.codec("tx3g", handler: "text", []) == "tx3g")
  }
}
