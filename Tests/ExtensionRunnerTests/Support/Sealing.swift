import CCrypto
import Foundation

/// The encrypt side of `encrypted_data`, for tests: AES-256-GCM through libcrypto, written
/// independently of the runner's decryptor so each checks the other.
enum Sealing {
  /// libcrypto refused a step.
  struct Failure: Error {}

  /// `base64(nonce ‖ ciphertext ‖ tag)` of `plaintext` under the 32-byte `key`.
  static func seal(_ plaintext: [UInt8], key: [UInt8], nonce: [UInt8] = randomBytes(12)) throws -> String {
    guard let context = EVP_CIPHER_CTX_new() else { throw Failure() }
    defer { EVP_CIPHER_CTX_free(context) }
    var ciphertext = [UInt8](repeating: 0, count: plaintext.count + 16)
    var tag = [UInt8](repeating: 0, count: 16)
    var written: Int32 = 0
    var finalWritten: Int32 = 0
    guard EVP_EncryptInit_ex(context, EVP_aes_256_gcm(), nil, nil, nil) == 1,
      EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_GCM_SET_IVLEN, Int32(nonce.count), nil) == 1,
      EVP_EncryptInit_ex(context, nil, nil, key, nonce) == 1,
      EVP_EncryptUpdate(context, &ciphertext, &written, plaintext, Int32(plaintext.count)) == 1,
      ciphertext.withUnsafeMutableBufferPointer({ buffer in
        EVP_EncryptFinal_ex(context, buffer.baseAddress.map { $0 + Int(written) }, &finalWritten)
      }) == 1,
      EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_GCM_GET_TAG, 16, &tag) == 1
    else { throw Failure() }
    return Data(nonce + ciphertext[..<Int(written + finalWritten)] + tag).base64EncodedString()
  }

  /// The JSON alert text sealed under `key`.
  static func sealAlert(title: String, body: String, key: [UInt8]) throws -> String {
    let json = try JSONSerialization.data(
      withJSONObject: ["title": title, "body": body], options: [.sortedKeys])
    return try seal(Array(json), key: key)
  }

  /// `count` random bytes.
  static func randomBytes(_ count: Int) -> [UInt8] {
    var generator = SystemRandomNumberGenerator()
    return (0..<count).map { _ in UInt8.random(in: 0...255, using: &generator) }
  }

  /// A key as 64 hex digits.
  static func hex(_ bytes: [UInt8]) -> String {
    bytes.map { String(format: "%02x", $0) }.joined()
  }
}
