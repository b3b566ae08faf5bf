import AttachmentKit
import AttachmentServer
import Foundation
import TestTraits
import Testing

/// The signing scheme against an independent implementation (Python's hmac and base64).
@Suite("signed proxy URLs", .threadOfItsOwn)
struct SigningTests {
  /// The path Python computes for `url` with the hex `key`.
  private func pythonPath(_ url: String, key: String) async throws -> String {
    let script = """
      import base64, hashlib, hmac, sys
      url = sys.argv[1].encode()
      sig = hmac.new(bytes.fromhex(sys.argv[2]), url, hashlib.sha256).hexdigest()
      print("/v1/a/%s/%s" % (sig, base64.urlsafe_b64encode(url).decode().rstrip("=")))
      """
    return try await Run.process("/usr/bin/python3", ["-c", script, url, key]).text
      .trimmingCharacters(in: .whitespacesAndNewlines)
  }

  @Test("attachkit sign and URLSigner print what Python's hmac and base64 compute, for any URL length")
  func matchesPython() async throws {
    let workspace = try Workspace()
    defer { workspace.remove() }
    // Lengths 0, 1 and 2 mod 3 exercise every padding case; non-ASCII exercises UTF-8.
    let urls = [
      "https://cdn.example.com/a.jpg", "https://cdn.example.com/ab.jpg", "https://cdn.example.com/abc.jpg",
      "https://cdn.example.com/caf%C3%A9/é.png?w=1&h=2#frag",
    ]
    let signer = try URLSigner(keyFile: workspace.keyFile)
    for url in urls {
      let expected = try await pythonPath(url, key: Workspace.keyA)
      #expect(try signer.path(for: url) == expected)
      let printed = try await Run.process(Binaries.attachkit, ["sign", "--key-file", workspace.keyFile, url])
      #expect(printed.status == 0)
      #expect(printed.text == expected + "\n")
    }
    let full = try await Run.process(
      Binaries.attachkit,
      ["sign", "--key-file", workspace.keyFile, "--base", "https://media.example.com/", urls[0]])
    let python = try await pythonPath(urls[0], key: Workspace.keyA)
    #expect(full.text == "https://media.example.com" + python + "\n")
  }

  @Test("the first key signs and every key verifies; a changed signature, URL or key does not verify")
  func rotationAndTampering() async throws {
    let old = try URLSigner(keyFileText: Workspace.keyA)
    let rotated = try URLSigner(
      keyFileText: "\(Workspace.keyB)\n\n# old key, kept to verify\n\(Workspace.keyA)\n")
    let url = "https://cdn.example.com/push/1.jpg"
    let oldSignature = try old.signature(for: url)
    let newSignature = try rotated.signature(for: url)
    #expect(oldSignature != newSignature)
    #expect(rotated.verify(signature: oldSignature, for: url))
    #expect(rotated.verify(signature: newSignature, for: url))
    #expect(!old.verify(signature: newSignature, for: url))
    #expect(!rotated.verify(signature: oldSignature, for: url + "x"))
    var flipped = Array(oldSignature)
    flipped[10] = flipped[10] == "0" ? "1" : "0"
    #expect(!rotated.verify(signature: String(flipped), for: url))
    #expect(!rotated.verify(signature: oldSignature.uppercased() + "0", for: url))
    #expect(!rotated.verify(signature: String(oldSignature.dropLast()), for: url))
    // One spelling: the lower-case hex this signer prints, and no other.
    #expect(!rotated.verify(signature: oldSignature.uppercased(), for: url))
  }

  @Test(
    "every byte of the MAC is compared: the first, a middle and the last byte, and the last bit",
    arguments: SignatureTampering.cases)
  func everyMACByteCounts(byte: Int, mask: UInt8) throws {
    let signer = try URLSigner(
      keyFileText: "\(Workspace.keyB)\n\n# old key, kept to verify\n\(Workspace.keyA)\n")
    let url = "https://cdn.example.com/push/1.jpg"
    // Under the signing key and under the old one: each key's comparison is whole.
    for signature in [
      try signer.signature(for: url), try URLSigner(keyFileText: Workspace.keyA).signature(for: url),
    ] {
      #expect(signer.verify(signature: signature, for: url))
      let tampered = try #require(SignatureTampering.flip(signature, byte: byte, mask: mask))
      #expect(tampered != signature)
      #expect(!signer.verify(signature: tampered, for: url), "byte \(byte) ^ \(mask) of \(signature)")
    }
  }

  @Test(
    "each route has its own signature: info signs 'info', a line feed and the URL; neither opens the other")
  func routeBoundSignatures() async throws {
    let workspace = try Workspace()
    defer { workspace.remove() }
    let url = "https://cdn.example.com/push/1.jpg"
    let signer = try URLSigner(keyFile: workspace.keyFile)
    let file = try signer.signature(for: url)
    let info = try signer.signature(for: url, route: .info)
    #expect(file != info)
    #expect(signer.verify(signature: file, for: url))
    #expect(signer.verify(signature: info, for: url, route: .info))
    #expect(!signer.verify(signature: file, for: url, route: .info))
    #expect(!signer.verify(signature: info, for: url))
    // The file route is unchanged (every URL in a push keeps working): Python's HMAC of the URL.
    #expect(try signer.path(for: url) == (try await pythonPath(url, key: Workspace.keyA)))
    let script = """
      import hashlib, hmac, sys
      print(hmac.new(bytes.fromhex(sys.argv[2]), b"info\\n" + sys.argv[1].encode(), hashlib.sha256).hexdigest())
      """
    let python = try await Run.process("/usr/bin/python3", ["-c", script, url, Workspace.keyA]).text
    #expect(python == info + "\n")
    let printed = try await Run.process(
      Binaries.attachkit, ["sign", "--key-file", workspace.keyFile, "--route", "info", url])
    #expect(try printed.text == signer.path(for: url, route: .info) + "\n")
    #expect(printed.text.hasPrefix("/v1/info/\(info)/"))
  }

  @Test("key files: no key, a short key or a non-hex line are invalid_configuration")
  func badKeyFiles() {
    for text in ["", "# only a comment\n", "abcd\n", "zz" + String(repeating: "0", count: 40), "abc"] {
      #expect(throws: AttachmentError.self) { try URLSigner(keyFileText: text) }
      do {
        _ = try URLSigner(keyFileText: text)
      } catch {
        #expect(error.code == .invalidConfiguration)
      }
    }
    #expect(throws: AttachmentError.self) { try URLSigner(keyFile: "/nonexistent/keys") }
  }

  @Test("base64url: round trips every length, refuses padding, foreign characters and non-canonical tails")
  func base64URL() {
    for length in 0..<40 {
      let bytes = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 250) }
      let text = Base64URL.encode(bytes)
      #expect(!text.contains("=") && !text.contains("+") && !text.contains("/"))
      #expect(Base64URL.decode(text) == bytes)
    }
    #expect(Base64URL.decode("aGk=") == nil)
    #expect(Base64URL.decode("aG+k") == nil)
    #expect(Base64URL.decode("a") == nil)
    #expect(Base64URL.decode("aGk") == Array("hi".utf8))
    #expect(Base64URL.decode("aGl") == nil)  // "hi" with a stray low bit: a second spelling
  }
}

/// Changes to one byte of a hex MAC: the first, a middle and the last byte (all bits), and
/// the last bit alone. A comparison that skips any byte, or looks only at the leading hex
/// digits, lets at least one of them through.
enum SignatureTampering {
  /// (byte index, XOR mask) pairs.
  static let cases: [(Int, UInt8)] = [(0, 0xFF), (15, 0xFF), (16, 0xFF), (31, 0xFF), (31, 0x01)]

  /// `signature` (64 hex digits) with byte `byte` XORed with `mask`, in lowercase hex; nil
  /// when it is not 64 hex digits.
  static func flip(_ signature: String, byte: Int, mask: UInt8) -> String? {
    let digits = Array(signature.utf8)
    guard digits.count == 64, (0..<32).contains(byte) else { return nil }
    var bytes: [UInt8] = []
    for index in stride(from: 0, to: 64, by: 2) {
      guard let pair = UInt8(String(decoding: digits[index..<index + 2], as: UTF8.self), radix: 16) else {
        return nil
      }
      bytes.append(pair)
    }
    bytes[byte] ^= mask
    return bytes.map { String($0, radix: 16).leftPadded(to: 2) }.joined()
  }
}

extension String {
  fileprivate func leftPadded(to width: Int) -> String {
    String(repeating: "0", count: max(0, width - count)) + self
  }
}
