import AttachmentKit
import Foundation
import TestTraits
import Testing

@testable import AttachmentServer

/// The route table as values: every row's paths, made by the signer, route back to that row,
/// verify, and log without their secret; old paths keep their meaning; each form has one spelling.
@Suite("the proxy route table", .threadOfItsOwn)
struct RouteTableTests {
  /// A path signed with `Workspace.keyA` before expiring and hidden paths existed (Python's
  /// HMAC of the URL, as `attachkit sign` printed it then): it must verify forever.
  static let oldFilePath =
    "/v1/a/c72082f8bada3c353479ff5df8f6c246eabcc22b1c65ba54eb29bc863a9e25a5/aHR0cDovLzEyNy4wLjAuMTo5L29sZC1wdXNoLmdpZg"
  /// The same URL's info path from before (`info`, a line feed, the URL).
  static let oldInfoPath =
    "/v1/info/a93ef80d277a17f6809edd4921d1d65855d218cc1eae64ca6e5a00e0e19c480d/aHR0cDovLzEyNy4wLjAuMTo5L29sZC1wdXNoLmdpZg"
  static let oldURL = "http://127.0.0.1:9/old-push.gif"
  static let now: Int64 = 1_800_000_000

  @Test("old paths route as before and verify under the old key")
  func oldPathsUnchanged() throws {
    let signer = try URLSigner(keyFileText: "\(Workspace.keyB)\n\(Workspace.keyA)\n")
    let file = Route(target: Self.oldFilePath)
    #expect(
      file == .attachment(url: Self.oldURL, signature: String(Self.oldFilePath.split(separator: "/")[2])))
    guard case .proxy(let filePath) = file, case .proxy(let infoPath) = Route(target: Self.oldInfoPath) else {
      Issue.record("an old path is not a proxy route")
      return
    }
    #expect(filePath.route == .attachment && filePath.expiry == nil)
    #expect(try signer.url(of: filePath, now: Self.now) == Self.oldURL)
    #expect(infoPath.route == .info)
    #expect(try signer.url(of: infoPath, now: Self.now) == Self.oldURL)
    // The signing key still prints the same form (its own signature).
    let reprinted = try URLSigner(keyFileText: Workspace.keyA).path(for: Self.oldURL)
    #expect(reprinted == Self.oldFilePath)
  }

  @Test("every row, with and without an expiry: the signer's path routes back to its row and URL")
  func everyRowRoundTrips() throws {
    let signer = try URLSigner(keyFileText: Workspace.keyA)
    let url = "https://cdn.example.com/push/ü.jpg?token=secret&w=1"
    #expect(Set(ProxyRoute.all.map(\.name)).count == ProxyRoute.all.count)
    for row in ProxyRoute.all {
      for expiry in row.canExpire ? [nil, Self.now + 60] : [nil] {
        let target = try signer.path(for: url, route: row, expires: expiry)
        guard case .proxy(let path) = Route(target: target) else {
          Issue.record("\(row) \(String(describing: expiry)): \(target) is \(Route(target: target))")
          continue
        }
        #expect(path.route == row && path.expiry == expiry)
        #expect(Route(target: target).label == row.label)
        #expect(try signer.url(of: path, now: Self.now) == url)
        let logged = LoggedPath.of(target: target, route: .proxy(path))
        #expect(!logged.contains("secret"), "\(logged)")
        #expect(logged.hasPrefix("/v1/\(row.name)/"))
        if row.protection == .signed { #expect(!logged.contains(String(target.split(separator: "/")[2]))) }
        if row.protection == .sealed, let sealed = Base64URL.decode(target.split(separator: "/").last ?? "") {
          // The path hides the origin: no byte run of the URL is in it.
          #expect(!String(decoding: sealed, as: UTF8.self).contains("cdn.example"))
          #expect(logged == "/v1/\(row.name)/\(expiry.map { "\($0)/" } ?? "")-")
        }
      }
    }
    #expect(throws: AttachmentError.self) { try signer.path(for: url, route: .unsigned, expires: Self.now) }
    #expect(throws: AttachmentError.self) {
      try signer.path(for: "https://a.example/x\ny", route: .attachment)
    }
  }

  @Test("an expiring or hidden path has one spelling: every other is malformed (400)")
  func oneSpellingOfNewForms() throws {
    let signer = try URLSigner(keyFileText: Workspace.keyA)
    let url = "https://cdn.example.com/ab.jpg"  // 58 sealed bytes: the last character has stray bits
    let expiring = try signer.path(for: url, expires: Self.now)
    let parts = expiring.split(separator: "/").map(String.init)  // v1, a, sig, expiry, enc
    let (signature, expiry, encoded) = (parts[2], parts[3], parts[4])
    let hidden = try signer.path(for: url, route: .hidden, expires: Self.now)
    let sealed = String(hidden.split(separator: "/")[3])
    for bad in [
      "/v1/a/\(signature)/0\(expiry)/\(encoded)", "/v1/a/\(signature)/+\(expiry)/\(encoded)",
      "/v1/a/\(signature)/\(expiry).0/\(encoded)", "/v1/a/\(signature)/ \(expiry)/\(encoded)",
      "/v1/a/\(signature)/\(expiry)/\(encoded)=", "/v1/a/\(signature)/\(expiry)/\(encoded)/",
      "/v1/a/\(signature)/\(expiry)/\(encoded)?", "/v1/a/\(signature)/%31\(expiry.dropFirst())/\(encoded)",
      "/v1/a/\(signature)//\(encoded)", "/v1/a/\(signature)/1\(String(repeating: "0", count: 11))/\(encoded)",
      "/v1/e/0\(expiry)/\(sealed)", "/v1/e/\(expiry)/\(sealed)=", "/v1/e/\(expiry)/\(sealed)/",
      "/v1/e/\(expiry)/\(sealed)?x=1",
      "/v1/e/\(expiry)/%\(String(format: "%02X", sealed.utf8.first ?? 0))\(sealed.dropFirst())",
      "/v1/e/\(expiry)/\(sealed.dropLast())\(Self.strayBits(sealed.last ?? "A"))",
      "/v1/e/\(expiry)/x/\(sealed)",
      "/v1/u/\(expiry)/\(encoded)",
    ] {
      if case .malformed = Route(target: bad) {} else { Issue.record("\(bad) is \(Route(target: bad))") }
    }
    // Upper-case hex routes (it is a signature), and does not verify: 403 there.
    guard case .proxy(let upper) = Route(target: "/v1/a/\(signature.uppercased())/\(expiry)/\(encoded)")
    else {
      Issue.record("upper-case hex is not routed")
      return
    }
    #expect(throws: AttachmentError.self) { try signer.url(of: upper, now: Self.now - 1) }
  }

  /// A last base64url character that spells the same bytes with a non-zero stray bit, when
  /// there is one (else another character: the tag changes and the seal fails).
  static func strayBits(_ last: Character) -> Character {
    let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
    guard let index = alphabet.firstIndex(of: last) else { return "A" }
    return alphabet[index ^ 1]
  }
}
