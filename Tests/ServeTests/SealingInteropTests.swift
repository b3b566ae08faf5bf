import AttachmentKit
import Foundation
import TestTraits
import Testing

@testable import AttachmentServer

/// The hidden-origin scheme against an independent implementation: Python's `cryptography`
/// (AES-GCM over its own OpenSSL build) and `hmac` open what `attachkit sign --encrypt` prints,
/// and seal a URL the signer then opens, so the format is what deploy.md says, not merely
/// consistent with itself.
@Suite("hidden origins: Python's AES-GCM agrees", .threadOfItsOwn)
struct SealingInteropTests {
  /// Decrypts (`open`) or encrypts (`seal`) with the documented scheme; prints `missing` when
  /// the `cryptography` module is not installed.
  private static let script = """
    import base64, hashlib, hmac, os, sys
    try:
        from cryptography.hazmat.primitives.ciphers.aead import AESGCM
    except ImportError:
        print("missing"); sys.exit(0)
    mode, key, route, expiry, text = sys.argv[1:6]
    aes = hmac.new(bytes.fromhex(key), b"attachkit sealed-url key v1", hashlib.sha256).digest()
    aad = b"attachkit sealed url v1\\n" + route.encode() + b"\\n" + expiry.encode()
    if mode == "open":
        sealed = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
        print(AESGCM(aes).decrypt(sealed[:12], sealed[12:], aad).decode())
    else:
        nonce = os.urandom(12)
        print(base64.urlsafe_b64encode(nonce + AESGCM(aes).encrypt(nonce, text.encode(), aad)).decode().rstrip("="))
    """

  @Test("Python opens 'attachkit sign --encrypt' output, and the signer opens Python's seal")
  func pythonAgrees() async throws {
    let workspace = try Workspace()
    defer { workspace.remove() }
    let url = "https://cdn.example.com/push/ü-1.jpg?w=2"
    let printed = try await Run.process(
      Binaries.attachkit, ["sign", "--key-file", workspace.keyFile, "--encrypt", "--expires", "1h", url])
    let parts = printed.text.trimmingCharacters(in: .whitespacesAndNewlines).split(separator: "/").map(
      String.init)
    try #require(parts.count == 4 && parts[1] == "e")  // v1, e, expiry, sealed
    let opened = try await Run.process(
      "/usr/bin/python3", ["-c", Self.script, "open", Workspace.keyA, "e", parts[2], parts[3]])
    if opened.text == "missing\n" { try Skips.skipRest("python3's cryptography module is not installed") }
    #expect(opened.text == url + "\n", "\(opened.stderr)")

    let sealed = try await Run.process(
      "/usr/bin/python3", ["-c", Self.script, "seal", Workspace.keyA, "e", "", url]
    ).text.trimmingCharacters(in: .whitespacesAndNewlines)
    let signer = try URLSigner(keyFile: workspace.keyFile)
    guard case .proxy(let path) = Route(target: "/v1/e/\(sealed)") else {
      Issue.record("Python's seal does not route")
      return
    }
    #expect(try signer.url(of: path, now: 0) == url)
  }
}
