import ExtensionRunnerCore
import Foundation
import TestTraits
import Testing

/// AES-256-GCM `encrypted_data`: the decryptor on its own, and the critical step in a run.
@Suite("Decryption of encrypted_data", .cpuBound)
struct DecryptionTests {
  @Test("the committed sample key opens the committed encrypted payload")
  func committedSample() throws {
    let key = try DecryptionKey.read(file: Repository.payload("sample.key"))
    let payload = try NotificationPayload.read(fileBytes(Repository.payload("encrypted.json")))
    let field = try #require(payload.userInfo["encrypted_data"]?.stringValue)
    let alert = try DecryptedAlert(plaintext: Decryptor.open(field, key: key))
    #expect(alert.title == "Your sign-in code")
    #expect(alert.subtitle == "Acme Bank")
    #expect(alert.body == "428 913 is your code. It expires in 5 minutes.")
  }

  @Test(
    "round trip with an independent encrypter, for sizes around the block size",
    arguments: [0, 1, 15, 16, 17, 1000])
  func roundTrip(_ size: Int) throws {
    let key = Sealing.randomBytes(32)
    let plaintext = Sealing.randomBytes(size)
    let sealed = try Sealing.seal(plaintext, key: key)
    #expect(try Decryptor.open(sealed, key: #require(DecryptionKey(bytes: key))) == plaintext)
  }

  @Test("a wrong key, a flipped bit anywhere, or a cut box is refused")
  func refusals() throws {
    let keyBytes = Sealing.randomBytes(32)
    let key = try #require(DecryptionKey(bytes: keyBytes))
    let sealed = try Sealing.seal(Array("{\"body\":\"secret\"}".utf8), key: keyBytes)
    let wrongKey = try #require(DecryptionKey(bytes: Sealing.randomBytes(32)))
    #expect(throws: Decryptor.Failure.self) { try Decryptor.open(sealed, key: wrongKey) }

    let box = try #require(Data(base64Encoded: sealed))
    for index in [0, 11, 12, box.count - 17, box.count - 1] {  // nonce, ciphertext, tag
      var altered = Array(box)
      altered[index] ^= 0x01
      #expect(throws: Decryptor.Failure.self) {
        try Decryptor.open(Data(altered).base64EncodedString(), key: key)
      }
    }
    #expect(throws: Decryptor.Failure.self) {
      try Decryptor.open(Data(box.prefix(27)).base64EncodedString(), key: key)
    }
    #expect(throws: Decryptor.Failure.self) { try Decryptor.open("not base64 at all!", key: key) }
  }

  @Test("key files: 64 hex digits, base64 or 32 raw bytes; anything else is refused")
  func keyFormats() throws {
    let bytes = Sealing.randomBytes(32)
    #expect(DecryptionKey.parse(Array((Sealing.hex(bytes) + "\n").utf8))?.bytes == bytes)
    #expect(DecryptionKey.parse(Array(Sealing.hex(bytes).uppercased().utf8))?.bytes == bytes)
    #expect(DecryptionKey.parse(Array((Data(bytes).base64EncodedString() + "\n").utf8))?.bytes == bytes)
    #expect(DecryptionKey.parse(bytes)?.bytes == bytes)
    #expect(DecryptionKey.parse(Array(Sealing.hex(Array(bytes.prefix(16))).utf8)) == nil)
    #expect(DecryptionKey.parse([]) == nil)
    #expect(throws: DecryptionKey.ReadError.self) { try DecryptionKey.read(file: "/nonexistent/key") }
  }

  @Test("the decrypted object must carry text; other fields are ignored")
  func decryptedShape() throws {
    #expect(throws: Decryptor.Failure.self) { try DecryptedAlert(plaintext: Array("not json".utf8)) }
    #expect(throws: Decryptor.Failure.self) { try DecryptedAlert(plaintext: Array("[1]".utf8)) }
    #expect(throws: Decryptor.Failure.self) { try DecryptedAlert(plaintext: Array("{\"title\": 5}".utf8)) }
    let alert = try DecryptedAlert(plaintext: Array("{\"body\": \"b\", \"title\": 5, \"x\": 1}".utf8))
    #expect(alert.body == "b")
    #expect(alert.title == nil)
    var content = NotificationContent(title: "T", subtitle: "S", body: "B")
    alert.apply(to: &content)
    #expect((content.title, content.subtitle, content.body) == ("T", "S", "b"))
  }

  @Test("in a run, every decryption failure keeps the original text", arguments: FailureCase.allCases)
  func failuresFallBack(_ failure: FailureCase) async throws {
    let fixture = try RunnerFixture("decrypt")
    defer { fixture.close() }
    let key = Sealing.randomBytes(32)
    let keyFile = try fixture.write("k.key", Sealing.hex(key))
    let field: String
    switch failure {
    case .noKey, .wrongKey: field = "\"\(try Sealing.sealAlert(title: "X", body: "Y", key: key))\""
    case .notAString: field = "[1, 2]"
    case .notBase64: field = "\"%%%\""
    case .notJSON: field = "\"\(try Sealing.seal(Array("plain text".utf8), key: key))\""
    }
    let payload = try fixture.write(
      "p.json",
      #"{"aps": {"alert": {"title": "T", "body": "B"}, "mutable-content": 1}, "encrypted_data": \#(field)}"#)
    var arguments = fixture.commonArguments + ["--trace"]
    switch failure {
    case .noKey: break
    case .wrongKey:
      arguments += ["--key-file", try fixture.write("w.key", Sealing.hex(Sealing.randomBytes(32)))]
    default: arguments += ["--key-file", keyFile]
    }

    let run = await fixture.runInProcess(arguments + [payload])

    #expect(run.status == 0)
    let output = try run.output()
    #expect(output.title == "T")
    #expect(output.body == "B")
    #expect(output.trace?.first { $0.name == "decrypt" }?.outcome == "failed")
  }

  /// Ways the critical step can fail.
  enum FailureCase: String, CaseIterable, Sendable {
    case noKey, wrongKey, notAString, notBase64, notJSON
  }
}
