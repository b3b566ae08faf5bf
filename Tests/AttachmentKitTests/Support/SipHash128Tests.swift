import Foundation
import TestSupport
import TestTraits
import Testing

@testable import AttachmentKit

/// The record-naming hash: SipHash-2-4-128 against the reference's vectors and against
/// OpenSSL's own implementation (`openssl mac SIPHASH`, an independent oracle).
@Suite("SipHash-2-4-128", .cpuBound)
struct SipHash128Tests {
  /// The reference key 00 01 … 0f.
  static let referenceKey = (0..<16).map { UInt8($0) }

  @Test(
    "the reference vectors (vectors.h of the reference: its key, messages 00 01 … of length 0, 1, 2, 3, 7 and 8)",
    arguments: [
      (0, "a3817f04ba25a8e66df67214c7550293"), (1, "da87c1d86b99af44347659119b22fc45"),
      (2, "8177228da4a45dc7fca38bdef60affe4"), (3, "9c70b60c5267a94e5f33b6b02985ed51"),
      (7, "a1f1ebbed8dbc153c0b84aa61ff08239"), (8, "3b62a9ba6258f5610f83e264f31497b4"),
    ])
  func vectors(length: Int, expected: String) throws {
    let hash = try #require(SipHash128(key: Self.referenceKey))
    #expect(hash.hex((0..<length).map { UInt8($0) }) == expected)
  }

  @Test("matches openssl mac SIPHASH for random keys and messages of every length up to 80")
  func matchesOpenSSL() async throws {
    var generator = SystemRandomNumberGenerator()
    for length in 0...80 {
      let key = (0..<16).map { _ in UInt8.random(in: 0...255, using: &generator) }
      let message = (0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) }
      let oracle = try await Self.openssl(key: key, message: message)
      #expect(try #require(SipHash128(key: key)).hex(message) == oracle, "length \(length)")
    }
  }

  @Test("a key of any other size than 16 bytes is refused")
  func keySize() {
    #expect(SipHash128(key: []) == nil)
    #expect(SipHash128(key: Array(repeating: 0, count: 15)) == nil)
    #expect(SipHash128(key: Array(repeating: 0, count: 17)) == nil)
  }

  /// `openssl mac -macopt hexkey:… -macopt size:16 SIPHASH` over `message`, on a thread of its
  /// own; its hex answer in lower case.
  static func openssl(key: [UInt8], message: [UInt8]) async throws -> String {
    let scratch = try ScratchDirectory("siphash")
    defer { scratch.remove() }
    let input = scratch.path + "/m"
    try writeTestFile(Data(message), to: input)
    let hexKey = key.map { String(format: "%02x", $0) }.joined()
    return try await onOwnThread { () throws -> String in
      let process = Process()
      process.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
      process.arguments = [
        "mac", "-macopt", "hexkey:\(hexKey)", "-macopt", "size:16", "-in", input, "SIPHASH",
      ]
      let pipe = Pipe.closingOnExec()
      process.standardOutput = pipe
      try process.runClosingChildEnds()
      let data = pipe.fileHandleForReading.readDataToEndOfFile()
      process.blockUntilExit()
      process.closeStandardPipes()
      return String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        .lowercased()
    }
  }
}
