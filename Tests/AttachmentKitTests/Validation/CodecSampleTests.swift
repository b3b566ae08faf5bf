import Foundation
import TestTraits
import Testing

@testable import AttachmentKit

/// Issue 18 on real files: every sample whose manifest notes name its codecs is judged as the
/// decodability table says, through the validator, the streaming sniffer and the cache record.
@Suite("Codecs of the bundled samples", .cpuBound)
struct CodecSampleTests {
  /// The codecs strings at the end of a row's notes ("…, codecs avc1.64000A dtsc").
  static func codecs(_ entry: Samples.Entry) -> [String] {
    guard let range = entry.notes.range(of: "codecs ", options: .backwards) else { return [] }
    return entry.notes[range.upperBound...].split(separator: " ").map(String.init)
  }

  static let withCodecs = Samples.manifest.filter { !codecs($0).isEmpty }

  @Test("the samples cover every group of the table")
  func coverage() {
    let files = Set(Self.withCodecs.map(\.file))
    for file in [
      "mp4-hevc.mp4", "mp4-av1.mp4", "mp4-vp9-aac.mp4", "m4a-opus.mp4", "m4a-ac3.mp4", "m4a-eac3.mp4",
      "m4a-dts.mp4", "m4a-truehd.mp4", "mp4-h264-dts.mp4", "wav-extensible-pcm24.wav", "wav-ms-adpcm.wav",
      "mp3-leading-zeros.mp3", "mp3-trailing-garbage.mp3", "mpeg2-ps-ac3.mpg",
    ] {
      #expect(files.contains(file), "\(file)")
    }
  }

  @Test("each sample gets its codecs, its verdict and, where noted, a warning", arguments: withCodecs)
  func sample(_ entry: Samples.Entry) {
    let expected = Self.codecs(entry)
    do {
      let validation = try Validator().validate(file: Samples.path(entry.file))
      #expect(entry.expect == "accepted", "accepted: \(validation)")
      #expect(validation.codecs == expected)
      let codecWarnings = validation.warnings.filter { !$0.contains("outside Apple's published") }
      #expect(codecWarnings.isEmpty == !entry.notes.contains("(warning)"), "\(validation.warnings)")
    } catch {
      #expect(error.code.rawValue == entry.expect, "\(error)")
      #expect(error.code == .unsupportedCodec)
      #expect(error.isRejection)
      let mime =
        entry.file.hasPrefix("m4a-") ? "audio/mp4" : entry.file.hasSuffix(".wav") ? "audio/wav" : "video/mp4"
      // `detected` names the codecs of the file's category that do not decode (the first ones).
      #expect(error.detected == "\(mime); codecs=\"\(expected[0])\"")
      #expect(error.message.hasSuffix("which iOS does not decode."))
    }
  }

  @Test("the refusal names the codec in words")
  func refusalInWords() {
    do {
      _ = try Validator().validate(file: Samples.path("m4a-dts.mp4"))
      Issue.record("DTS accepted")
    } catch {
      #expect(error.message == "The audio is DTS audio, which iOS does not decode.")
      #expect(error.detected == "audio/mp4; codecs=\"dtsc\"")
    }
  }

  /// Feeds `bytes` to a fresh sniffer in 4 KiB chunks; returns the first rejection, if any.
  static func sniff(_ bytes: [UInt8]) -> AttachmentError? {
    let sniffer = StreamingSniffer()
    var offset = 0
    while offset < bytes.count {
      let chunk = Array(bytes[offset..<min(offset + 4_096, bytes.count)])
      let verdict = chunk.withUnsafeBytes { sniffer.inspect(body: $0, at: Int64(offset)) }
      if case .reject(let error) = verdict { return error }
      offset += chunk.count
    }
    return nil
  }

  @Test(
    "the sniffer refuses a moov-first VP9 MP4 from its first 4 KiB; a moov-last DTS one only on the whole file"
  )
  func sniffer() throws {
    let vp9 = try Samples.bytes("mp4-vp9-aac.mp4")
    let early = Self.sniff(Array(vp9.prefix(4_096)))
    #expect(early?.code == .unsupportedCodec)
    #expect(early?.detected == "video/mp4; codecs=\"vp09.00.10.08\"")
    let dts = try Samples.bytes("m4a-dts.mp4")
    #expect(Self.sniff(dts) == nil)  // the moov comes last: judged by the validator
    #expect(throws: AttachmentError.self) { try Validator().validate(file: Samples.path("m4a-dts.mp4")) }
    // A decodable moov-first file streams through.
    #expect(Self.sniff(try Samples.bytes("mov-moov-first.mov")) == nil)
  }

  @Test("a Validation encodes its codecs, and one encoded before codecs existed still decodes")
  func codable() throws {
    let validation = try Validator().validate(file: Samples.path("mp4-video-audio.mp4"))
    let encoded = try JSONEncoder().encode(validation)
    #expect(try JSONDecoder().decode(Validation.self, from: encoded) == validation)
    var object = try #require(try JSONSerialization.jsonObject(with: encoded) as? [String: Any])
    #expect(object["codecs"] as? [String] == ["avc1.64000A", "mp4a.40.2"])
    object["codecs"] = nil
    let older = try JSONDecoder().decode(
      Validation.self, from: try JSONSerialization.data(withJSONObject: object))
    #expect(older.codecs.isEmpty && older.sha256 == validation.sha256)
  }

  @Test("the codecs survive the cache record, one codec line each")
  func cacheRecord() throws {
    let validation = try Validator().validate(file: Samples.path("mp4-h264-dts.mp4"))
    #expect(validation.codecs == ["avc1.64000A", "dtsc"])
    let record = CacheRecord(
      url: "https://example.com/a.mp4", validation: validation, peer: .public, etag: nil, lastModified: nil,
      date: nil,
      fetchedAt: 1, freshUntil: 2, lastAccess: 3)
    let text = record.encoded()
    #expect(text.contains("\ncodec avc1.64000A\ncodec dtsc\n"))
    let decoded = try #require(CacheRecord(decoding: Substring(text)))
    #expect(decoded.validation.codecs == ["avc1.64000A", "dtsc"])
    #expect(decoded == record)
  }
}
