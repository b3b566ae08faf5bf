import Foundation
import TestSupport
import TestTraits
import Testing

@testable import AttachmentKit

@Suite("SHA-256 through libcrypto", .cpuBound)
struct SHA256HasherTests {
  @Test("matches the FIPS 180-2 test vectors")
  func knownVectors() {
    // Given the published vectors
    let vectors: [(String, String)] = [
      ("", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"),
      ("abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"),
      (
        "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
        "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"
      ),
    ]
    for (input, expected) in vectors {
      // When each is hashed in one piece
      let hasher = SHA256Hasher()
      Array(input.utf8).withUnsafeBytes { hasher.update($0) }
      // Then the digest matches
      #expect(hasher.finalize() == expected)
    }
  }

  @Test("gives the same digest fed in pieces as in one piece")
  func streaming() {
    let million = [UInt8](repeating: UInt8(ascii: "a"), count: 1_000_000)
    let hasher = SHA256Hasher()
    var offset = 0
    var step = 1
    while offset < million.count {
      let end = min(million.count, offset + step)
      million[offset..<end].withUnsafeBytes { hasher.update($0) }
      offset = end
      step = step * 3 + 1
    }
    #expect(hasher.finalize() == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")
  }

  @Test("hashes a file in constant memory")
  func file() throws {
    let scratch = try ScratchDirectory("sha")
    defer { scratch.remove() }
    let path = scratch.path + "/abc"
    try writeTestFile(Data("abc".utf8), to: path)
    let result = SHA256Hasher.hashFile(atPath: path)
    #expect(result?.digest == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
    #expect(result?.bytes == 3)
    #expect(SHA256Hasher.hashFile(atPath: scratch.path + "/missing") == nil)
  }
}
