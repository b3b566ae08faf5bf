import AttachmentKit

/// AES-256-GCM through libcrypto's EVP interface (no cipher code of our own): seals a message
/// with a 12-byte random nonce and a 16-byte tag, and opens it again only when the tag holds.
enum AESGCM {
  /// The nonce's length, in bytes (GCM's default IV length).
  static let nonceBytes = 12
  /// The tag's length, in bytes (the full 128 bits).
  static let tagBytes = 16
  /// The key's length, in bytes.
  static let keyBytes = 32

  /// `nonce ‖ ciphertext ‖ tag` of `plaintext` under `key` (32 bytes), authenticating `aad` too,
  /// with a fresh nonce from `RAND_bytes`.
  /// - Throws: `invalid_configuration` when libcrypto is missing or fails.
  static func seal(_ plaintext: [UInt8], aad: [UInt8], key: [UInt8]) throws(AttachmentError) -> [UInt8] {
    guard let library = Libcrypto.shared, key.count == keyBytes else { throw failure("seal") }
    var nonce = [UInt8](repeating: 0, count: nonceBytes)
    guard library.randomBytes(&nonce, Int32(nonceBytes)) == 1 else { throw failure("draw a nonce for") }
    guard let context = library.cipherContextNew() else { throw failure("seal") }
    defer { library.cipherContextFree(context) }
    var ciphertext = [UInt8](repeating: 0, count: plaintext.count)
    var tag = [UInt8](repeating: 0, count: tagBytes)
    var length: Int32 = 0
    var final: [UInt8] = [0]
    guard library.encryptInit(context, library.aes256GCM(), nil, key, nonce) == 1,
      aad.isEmpty || library.encryptUpdate(context, nil, &length, aad, Int32(aad.count)) == 1,
      library.encryptUpdate(context, &ciphertext, &length, plaintext, Int32(plaintext.count)) == 1,
      length == Int32(plaintext.count),
      library.encryptFinal(context, &final, &length) == 1, length == 0,
      library.cipherControl(context, Libcrypto.gcmGetTag, Int32(tagBytes), &tag) == 1
    else { throw failure("seal") }
    return nonce + ciphertext + tag
  }

  /// The plaintext of `sealed` (`nonce ‖ ciphertext ‖ tag`) under `key`, or `nil` when it is too
  /// short, when the tag does not authenticate it and `aad` (libcrypto compares the tag in
  /// constant time), or when libcrypto is missing.
  static func open(_ sealed: [UInt8], aad: [UInt8], key: [UInt8]) -> [UInt8]? {
    guard let library = Libcrypto.shared, key.count == keyBytes, sealed.count > nonceBytes + tagBytes,
      let context = library.cipherContextNew()
    else { return nil }
    defer { library.cipherContextFree(context) }
    let nonce = Array(sealed.prefix(nonceBytes))
    let ciphertext = Array(sealed[nonceBytes..<(sealed.count - tagBytes)])
    var tag = Array(sealed.suffix(tagBytes))
    var plaintext = [UInt8](repeating: 0, count: ciphertext.count)
    var length: Int32 = 0
    var final: [UInt8] = [0]
    guard library.decryptInit(context, library.aes256GCM(), nil, key, nonce) == 1,
      aad.isEmpty || library.decryptUpdate(context, nil, &length, aad, Int32(aad.count)) == 1,
      library.decryptUpdate(context, &plaintext, &length, ciphertext, Int32(ciphertext.count)) == 1,
      length == Int32(ciphertext.count),
      library.cipherControl(context, Libcrypto.gcmSetTag, Int32(tagBytes), &tag) == 1,
      library.decryptFinal(context, &final, &length) == 1
    else { return nil }
    return plaintext
  }

  private static func failure(_ action: String) -> AttachmentError {
    AttachmentError(
      .invalidConfiguration, "libcrypto (libcrypto.so.3) could not \(action) a URL with AES-256-GCM.")
  }
}
