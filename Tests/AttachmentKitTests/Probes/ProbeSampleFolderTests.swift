import Foundation
import TestTraits
import Testing

@testable import AttachmentKit

/// One row of `Samples/media/manifest.tsv`: file, expected outcome, type, notes.
struct ProbeSampleRow: Sendable, CustomTestStringConvertible {
  let file: String
  let expect: String
  let type: String
  let notes: String

  var testDescription: String { file }

  /// The folder, found from this source file: …/Tests/AttachmentKitTests/Probes/X.swift →
  /// …/Samples/media.
  static let folder: String = {
    var parts = "\(#filePath)".split(separator: "/", omittingEmptySubsequences: false)
    parts.removeLast(4)
    return parts.joined(separator: "/") + "/Samples/media"
  }()

  /// The manifest's rows, or none when the folder or manifest is missing.
  static let all: [ProbeSampleRow] = {
    guard let file = try? FileBytes(path: folder + "/manifest.tsv") else { return [] }
    let bytes = file.bytes(at: 0, count: Int(clamping: file.count))
    guard !bytes.isEmpty else { return [] }
    let lines = String(decoding: bytes, as: UTF8.self).split(separator: "\n").dropFirst()
    return lines.compactMap { line in
      let columns = line.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
      guard columns.count >= 4 else { return nil }
      return ProbeSampleRow(file: columns[0], expect: columns[1], type: columns[2], notes: columns[3])
    }
  }()

  /// The formats the product type may be structurally.
  var formats: Set<ProbedFormat> {
    switch type {
    case "jpeg": [.jpeg]
    case "png": [.png]
    case "gif": [.gif]
    case "tiff": [.tiff]
    case "mp4", "mov": [.isoBMFF]
    case "mpeg": [.mpegProgramStream, .mpegVideoStream]
    case "mp3": [.mp3]
    case "aac": [.adts, .isoBMFF]
    case "wav": [.wav]
    case "caf": [.caf]
    case "aiff": [.aiff]
    default: []
    }
  }

  /// "W×H" from the notes (the first "<digits>x<digits>" word), if any.
  var size: (Int, Int)? {
    for word in notes.split(whereSeparator: { $0 == " " || $0 == "," }) {
      let halves = word.split(separator: "x")
      if halves.count == 2, let width = Int(halves[0]), let height = Int(halves[1]) { return (width, height) }
    }
    return nil
  }

  /// The codecs strings after "codecs" at the end of the notes ("…, codecs avc1.64000A dtsc"),
  /// or none.
  var codecs: [String] {
    guard let range = notes.range(of: "codecs ", options: .backwards) else { return [] }
    return notes[range.upperBound...].split(separator: " ").map(String.init)
  }

  /// The number before `unit` in the notes ("2.0 s", "5 frames"), if any.
  func number(before unit: String) -> Double? {
    let words = notes.split(whereSeparator: { $0 == " " || $0 == "," })
    for (index, word) in words.enumerated().dropFirst() where word == unit {
      if let value = Double(words[index - 1]) { return value }
    }
    return nil
  }
}

/// Runs identify and inspect over every file of `Samples/media` and checks them against the
/// manifest: accepted files identify as their format family and pass with the sizes, frames
/// and durations the notes give; truncated files are reported truncated; refused files match
/// no format, or are malformed on inspection (or, for limits, pass with the figure that breaks
/// the limit).
@Suite(.enabled(if: !ProbeSampleRow.all.isEmpty, "Samples/media/manifest.tsv not present"), .cpuBound)
struct ProbeSampleFolderTests {
  /// One manifest row: identify and inspect agree with what the manifest says.
  @Test(arguments: ProbeSampleRow.all)
  func sample(_ row: ProbeSampleRow) throws {
    let file = try FileBytes(path: ProbeSampleRow.folder + "/" + row.file)
    let identified = MediaProbe.identify(file: file)
    switch row.expect {
    case "accepted", "too_long", "too_many_pixels":
      let first = try #require(identified, "not identified")
      if row.expect == "accepted" { #expect(row.formats.contains(first.format)) }
      let report = try MediaProbe.inspect(file: file, as: first.format).get()
      check(report, against: row)
    case "unsupported_codec":
      // The container is fine; the decodability table refuses what is in it.
      let first = try #require(identified, "not identified")
      let report = try MediaProbe.inspect(file: file, as: first.format).get()
      #expect(report.streams.map(\.codec) == row.codecs)
      let type = try Classifier.mediaType(for: report, detected: nil).get()
      guard case .failure(let error) = CodecCheck.judge(report.streams, type: type) else {
        Issue.record("the codecs were accepted")
        return
      }
      #expect(error.code == .unsupportedCodec)
    case "truncated":
      let first = try #require(identified, "not identified")
      let result = MediaProbe.inspect(file: file, as: first.format)
      guard case .failure(.truncated) = result else {
        Issue.record("expected truncated, got \(result)")
        return
      }
    default:
      guard let first = identified else { return }
      // A file whose whole structure a decoder refuses (jpeg-short-app0.jpg: libjpeg stops at
      // the FF 80 after its APP0) is malformed on inspection.
      if case .failure(.malformed) = MediaProbe.inspect(file: file, as: first.format) { return }
      // Only an ISO BMFF file of a refused brand (3GPP) is identified: its brand refuses it
      #expect(first.format == .isoBMFF, "identified as \(first.format)")
      let report = try MediaProbe.inspect(file: file, as: first.format).get()
      guard case .failure = Classifier.mediaType(for: report, detected: nil) else {
        Issue.record("identified as \(first.format), and its brand is accepted")
        return
      }
    }
  }

  /// Compares the report with the figures in the row's notes.
  private func check(_ report: ProbeReport, against row: ProbeSampleRow) {
    if let (width, height) = row.size, row.type != "mp3" {
      #expect(report.width == width && report.height == height)
    }
    if row.type == "gif", let frames = row.number(before: "frames") ?? row.number(before: "frame") {
      #expect(report.frames == Int(frames))
    }
    let images: Set<String> = ["jpeg", "png", "gif", "tiff"]
    if !images.contains(row.type), let seconds = row.number(before: "s") {
      let duration = report.durationSeconds ?? -1
      #expect(abs(duration - seconds) <= max(0.15, seconds * 0.05), "duration \(duration) vs \(seconds)")
    }
    switch row.type {
    case "mov": #expect(report.isQuickTime)
    case "mp4": #expect(!report.isQuickTime && report.hasVideoTrack)
    case "aac" where report.format == .isoBMFF: #expect(report.hasAudioTrack && !report.hasVideoTrack)
    default: break
    }
    if row.notes.contains("fragmented") { #expect(report.isFragmented) }
    if !row.codecs.isEmpty { #expect(report.streams.map(\.codec) == row.codecs) }
    if row.expect == "too_long" { #expect((report.durationSeconds ?? 0) > 30) }
    if row.expect == "too_many_pixels" { #expect((report.width ?? 0) * (report.height ?? 0) > 100_000_000) }
  }
}
