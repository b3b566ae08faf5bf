import Foundation
import TestSupport
import TestTraits
import Testing

@testable import AttachmentKit

/// Issue 42, item 1: the codec table's FFmpeg side, checked against the `ffmpeg` command's own
/// list of codecs (`ffmpeg -codecs`), so a misspelt codec or decoder name cannot hide: an
/// allowlist entry naming no decoder would silently refuse every file of that codec.
@Suite("Codec table: FFmpeg's codecs and decoders", .cpuBound)
struct CodecTableDecodersTests {
  @Test("every row names a codec FFmpeg has, and decoders that codec has")
  func namesAreFFmpegs() async throws {
    let codecs = try await Self.ffmpegCodecs()
    try #require(codecs.count > 100, "ffmpeg -codecs listed \(codecs.count) codecs")
    for row in CodecTable.decoded {
      let known = try #require(codecs[row.codec], "\(row.codec) is not a codec FFmpeg knows")
      for decoder in row.decoders {
        #expect(known.contains(decoder), "\(row.codec)'s decoders are \(known.sorted()), not \(decoder)")
      }
    }
    #expect(Set(CodecTable.decoded.map(\.codec)).count == CodecTable.decoded.count, "a codec listed twice")
  }

  @Test("a row's codecs string is a row of the decodability table")
  func codecsStringsHaveRows() {
    for row in CodecTable.decoded {
      guard let codecs = row.codecs else { continue }
      #expect(CodecTable.rows[codecs] != nil, "\(row.codec) is written as \(codecs), which has no row")
    }
  }

  @Test("a rescue copies exactly H.264, HEVC, AAC, AC-3, E-AC-3 and MP3; the rest is re-encoded")
  func copiedCodecs() {
    #expect(CodecTable.copiedCodecs == ["h264", "hevc", "aac", "ac3", "eac3", "mp3"])
    #expect(MediaAllowlist.decoders == CodecTable.allowedDecoders)
    #expect(!CodecTable.allowedDecoders.contains("prores"), "a codec with no row is not allowed")
  }

  /// FFmpeg's codecs that decode, each with its decoders: `(decoders: a b)` when listed, else
  /// the decoder of the codec's own name.
  static func ffmpegCodecs() async throws -> [String: Set<String>] {
    let scratch = try ScratchDirectory("ffmpeg-codecs")
    defer { scratch.remove() }
    let listing = scratch.path + "/codecs.txt"
    let status = try await onOwnThread { () throws -> Int32 in
      _ = FileManager.default.createFile(atPath: listing, contents: nil)
      let output = try FileHandle(forWritingTo: URL(fileURLWithPath: listing))
      defer { try? output.close() }
      let process = Process()
      process.executableURL = URL(fileURLWithPath: "/usr/bin/ffmpeg")
      process.arguments = ["-hide_banner", "-codecs"]
      process.standardInput = FileHandle.nullDevice
      process.standardOutput = output
      try process.runClosingChildEnds()
      process.blockUntilExit()
      return process.terminationStatus
    }
    try #require(status == 0, "ffmpeg -codecs exited \(status)")
    var codecs: [String: Set<String>] = [:]
    for line in try String(contentsOfFile: listing, encoding: .utf8).split(separator: "\n") {
      let fields = line.split(separator: " ", maxSplits: 2)
      guard fields.count == 3, fields[0].count == 6, fields[0].first == "D" else { continue }
      let name = String(fields[1])
      var decoders: Set<String> = [name]
      if let open = line.range(of: "(decoders: "), let close = line[open.upperBound...].firstIndex(of: ")") {
        decoders = Set(line[open.upperBound..<close].split(separator: " ").map(String.init))
      }
      codecs[name] = decoders
    }
    return codecs
  }
}
