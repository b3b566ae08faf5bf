import Foundation
import Testing

/// The bundled media samples and their manifest (Samples/media/manifest.tsv).
enum Samples {
  /// One manifest row.
  struct Entry: Sendable, CustomTestStringConvertible {
    let file: String
    let expect: String  // "accepted" or an error code
    /// Accepted: the product's type; refused: the MIME its refusal names (libmagic's, or for an
    /// MPEG transport stream its packets').
    let type: String
    let notes: String
    var testDescription: String { "\(file) → \(expect == "accepted" ? type : expect)" }
  }

  static let directory: String = {
    let here = URL(fileURLWithPath: #filePath)  // …/Tests/AttachmentKitTests/Support/Samples.swift
    return here.deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
      .deletingLastPathComponent().appendingPathComponent("Samples/media").path
  }()

  static let manifest: [Entry] = {
    guard let text = try? String(contentsOfFile: directory + "/manifest.tsv", encoding: .utf8) else {
      return []
    }
    return text.split(separator: "\n").dropFirst().compactMap { line in
      let columns = line.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
      guard columns.count >= 3 else { return nil }
      return Entry(
        file: columns[0], expect: columns[1], type: columns[2], notes: columns.count > 3 ? columns[3] : "")
    }
  }()

  static var accepted: [Entry] { manifest.filter { $0.expect == "accepted" } }
  static var refused: [Entry] { manifest.filter { $0.expect != "accepted" } }

  static func path(_ file: String) -> String { directory + "/" + file }

  /// The fuzzed repros kept byte for byte (Samples/repro: `scripts/make-samples.sh` rewrites
  /// Samples/media, and cannot make these again).
  static let reproDirectory: String = {
    URL(fileURLWithPath: directory).deletingLastPathComponent().appendingPathComponent("repro").path
  }()

  /// The path of the fuzzed repro `file` (see ``reproDirectory``).
  static func repro(_ file: String) -> String { reproDirectory + "/" + file }

  static func bytes(_ file: String) throws -> [UInt8] {
    Array(try Data(contentsOf: URL(fileURLWithPath: path(file))))
  }
}
