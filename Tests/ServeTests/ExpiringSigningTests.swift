import AttachmentKit
import Foundation
import TestTraits
import Testing

@testable import AttachmentServer

/// Expiring and hidden paths as values, on a clock the test sets (`now` in Unix seconds).
@Suite("expiring and hidden signed paths", .threadOfItsOwn)
struct ExpiringSigningTests {
  static let now: Int64 = 1_800_000_000
  static let url = "https://cdn.example.com/push/1.jpg"

  /// The parsed path of `target`, or a recorded issue.
  private func parsed(_ target: String) -> ProxyPath? {
    guard case .proxy(let path) = Route(target: target) else {
      Issue.record("\(target) is \(Route(target: target))")
      return nil
    }
    return path
  }

  /// The code `signer` refuses `target` with at `now`, or `nil` when it is served.
  private func refusal(_ signer: URLSigner, _ target: String, now: Int64 = now) -> String? {
    guard let path = parsed(target) else { return "unparsed" }
    do {
      _ = try signer.url(of: path, now: now)
      return nil
    } catch {
      return error.code.rawValue
    }
  }

  @Test("an expiring path serves until its expiry, then is signature_expired (410), on any route")
  func expiresAtItsTime() throws {
    let signer = try URLSigner(keyFileText: Workspace.keyA)
    for route in [ProxyRoute.attachment, .info, .hidden, .hiddenInfo] {
      let target = try signer.path(for: Self.url, route: route, expires: Self.now)
      #expect(refusal(signer, target, now: Self.now - 1) == nil, "\(route)")
      #expect(refusal(signer, target, now: Self.now) == "signature_expired", "\(route)")
      #expect(refusal(signer, target, now: Self.now + 86_400) == "signature_expired", "\(route)")
    }
    #expect(ErrorStatus.of(AttachmentError(.signatureExpired, "")) == 410)
    #expect(ErrorStatus.of(AttachmentError(.badEncryptedURL, "")) == 403)
  }

  @Test("the expiry is signed: changed, added or removed, the signature does not verify (403)")
  func expiryIsCovered() throws {
    let signer = try URLSigner(keyFileText: Workspace.keyA)
    let target = try signer.path(for: Self.url, expires: Self.now)
    let parts = target.split(separator: "/").map(String.init)  // v1, a, sig, expiry, enc
    let later = "/v1/a/\(parts[2])/\(Self.now + 3_600)/\(parts[4])"
    #expect(refusal(signer, later, now: Self.now - 10) == "bad_signature")
    // The same signature without its expiry (an old-form path) or on the info route.
    #expect(refusal(signer, "/v1/a/\(parts[2])/\(parts[4])") == "bad_signature")
    #expect(
      refusal(signer, "/v1/info/\(parts[2])/\(parts[3])/\(parts[4])", now: Self.now - 10) == "bad_signature")
    // An old-form signature given an expiry.
    let old = try signer.path(for: Self.url).split(separator: "/").map(String.init)
    #expect(refusal(signer, "/v1/a/\(old[2])/\(Self.now)/\(old[3])", now: Self.now - 10) == "bad_signature")
    // A forged expiry in the past is a bad signature, not "expired": the MAC is checked first.
    #expect(refusal(signer, "/v1/a/\(parts[2])/\(Self.now - 5)/\(parts[4])") == "bad_signature")
  }

  @Test("the expiring message is 'expires', the route, the expiry and the URL, one line each (Python's HMAC)")
  func expiringMessageMatchesPython() async throws {
    let signer = try URLSigner(keyFileText: Workspace.keyA)
    let script = """
      import hashlib, hmac, sys
      message = b"expires\\na\\n" + sys.argv[3].encode() + b"\\n" + sys.argv[1].encode()
      print(hmac.new(bytes.fromhex(sys.argv[2]), message, hashlib.sha256).hexdigest())
      """
    let python = try await Run.process(
      "/usr/bin/python3", ["-c", script, Self.url, Workspace.keyA, String(Self.now)]
    ).text
    #expect(python == (try signer.signature(for: Self.url, expires: Self.now)) + "\n")
  }

  @Test(
    "a hidden path: any changed byte (nonce, ciphertext, tag), route or expiry is bad_encrypted_url (403)")
  func sealedTampering() throws {
    let signer = try URLSigner(keyFileText: Workspace.keyA)
    let target = try signer.path(for: Self.url, route: .hidden)
    #expect(refusal(signer, target) == nil)
    let sealed = try #require(Base64URL.decode(target.split(separator: "/").last ?? ""))
    for index in [0, 11, 12, sealed.count / 2, sealed.count - 17, sealed.count - 16, sealed.count - 1] {
      for mask: UInt8 in [0x01, 0x80] {
        var changed = sealed
        changed[index] ^= mask
        #expect(
          refusal(signer, "/v1/e/\(Base64URL.encode(changed))") == "bad_encrypted_url",
          "byte \(index) ^ \(mask)")
      }
    }
    let encoded = Base64URL.encode(sealed)
    #expect(refusal(signer, "/v1/ei/\(encoded)") == "bad_encrypted_url")
    #expect(refusal(signer, "/v1/e/\(Self.now)/\(encoded)", now: Self.now - 1) == "bad_encrypted_url")
    // An expiring one, its expiry changed or dropped.
    let expiring = try signer.path(for: Self.url, route: .hidden, expires: Self.now)
    let payload = String(expiring.split(separator: "/").last ?? "")
    #expect(refusal(signer, "/v1/e/\(Self.now + 1)/\(payload)", now: Self.now - 1) == "bad_encrypted_url")
    #expect(refusal(signer, "/v1/e/\(payload)") == "bad_encrypted_url")
    // Each call seals with a new nonce, and each opens.
    let again = try signer.path(for: Self.url, route: .hidden)
    #expect(again != target)
    #expect(refusal(signer, again) == nil)
  }

  @Test("rotation: the first key signs and seals, every key verifies and opens, a removed key does not")
  func rotation() throws {
    let old = try URLSigner(keyFileText: Workspace.keyA)
    let rotated = try URLSigner(keyFileText: "\(Workspace.keyB)\n\(Workspace.keyA)\n")
    let removed = try URLSigner(keyFileText: Workspace.keyB)
    for route in [ProxyRoute.attachment, .hidden] {
      let before = try old.path(for: Self.url, route: route, expires: Self.now)
      let after = try rotated.path(for: Self.url, route: route, expires: Self.now)
      #expect(refusal(rotated, before, now: Self.now - 1) == nil, "\(route)")
      #expect(refusal(rotated, after, now: Self.now - 1) == nil, "\(route)")
      #expect(refusal(old, after, now: Self.now - 1) != nil, "\(route)")
      #expect(refusal(removed, before, now: Self.now - 1) != nil, "\(route)")
    }
    // The AES key is derived, not the key file's key: the raw key does not open a sealed URL.
    let sealed = try old.seal(Self.url, route: .hidden, expiry: nil)
    let raw = try #require(URLSigner.hexBytes(Workspace.keyA))
    #expect(AESGCM.open(sealed, aad: URLSigner.sealedData(route: .hidden, expiry: nil), key: raw) == nil)
    #expect(
      AESGCM.open(
        sealed, aad: URLSigner.sealedData(route: .hidden, expiry: nil), key: try URLSigner.sealingKey(raw))
        == Array(Self.url.utf8))
  }

  @Test("durations: 90s, 15m, 1h, 7d; zero, signs, fractions, other units and more than ten years are not")
  func durations() {
    #expect(SignatureExpiry.seconds(ofDuration: "90s") == 90)
    #expect(SignatureExpiry.seconds(ofDuration: "15m") == 900)
    #expect(SignatureExpiry.seconds(ofDuration: "1h") == 3_600)
    #expect(SignatureExpiry.seconds(ofDuration: "7d") == 604_800)
    #expect(SignatureExpiry.seconds(ofDuration: "3650d") == 315_360_000)
    for bad in ["", "s", "0s", "-1h", "+1h", "1.5h", "1w", "1H", "1 h", "h1", "3651d", "99999999999d", "1"] {
      #expect(SignatureExpiry.seconds(ofDuration: bad) == nil, "\(bad)")
    }
    #expect(SignatureExpiry.parse(Array("1800000000".utf8)) == 1_800_000_000)
    for bad in ["", "0", "01", "-1", "+1", "1e9", "123456789012", " 1"] {
      #expect(SignatureExpiry.parse(Array(bad.utf8)) == nil, "\(bad)")
    }
  }
}
