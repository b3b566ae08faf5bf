import CCrypto
import Foundation

/// A 256-bit AES key, read from a key file.
public struct DecryptionKey: Sendable, Equatable {
  /// The 32 key bytes.
  public let bytes: [UInt8]

  /// Why a key file is unusable.
  public struct ReadError: Error, Equatable, CustomStringConvertible {
    /// One sentence for standard error.
    public let description: String
  }

  /// Wraps 32 bytes; `nil` for any other length.
  public init?(bytes: [UInt8]) {
    guard bytes.count == 32 else { return nil }
    self.bytes = bytes
  }

  /// Reads a key file holding the key as 64 hex digits, as base64 of 32 bytes (surrounding
  /// white space ignored), or as exactly 32 raw bytes that are not all printable text.
  public static func read(file path: String) throws(ReadError) -> DecryptionKey {
    guard let data = FileManager.default.contents(atPath: path) else {
      throw ReadError(description: "cannot read the key file \(path)")
    }
    if let key = parse(Array(data)) { return key }
    throw ReadError(
      description:
        "the key file \(path) holds no 256-bit key (64 hex digits, base64 of 32 bytes, or 32 bytes)")
  }

  /// The key in `contents` (hex, base64 or raw), or `nil`.
  public static func parse(_ contents: [UInt8]) -> DecryptionKey? {
    if let text = String(validating: contents, as: UTF8.self) {
      let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
      if trimmed.count == 64, let bytes = hexBytes(trimmed) { return DecryptionKey(bytes: bytes) }
      if let data = Data(base64Encoded: trimmed), data.count == 32 {
        return DecryptionKey(bytes: Array(data))
      }
    }
    // Raw bytes only when they are not text: 32 characters of text is a mistake, not a key.
    let isText = contents.allSatisfy { (0x20..<0x7F).contains($0) || $0 == 0x0A || $0 == 0x0D || $0 == 0x09 }
    return isText ? nil : DecryptionKey(bytes: contents)
  }

  /// The bytes of an even-length hex string, or `nil`.
  static func hexBytes(_ text: String) -> [UInt8]? {
    let digits = Array(text.utf8)
    guard digits.count.isMultiple(of: 2) else { return nil }
    var bytes: [UInt8] = []
    bytes.reserveCapacity(digits.count / 2)
    var index = 0
    while index < digits.count {
      guard let high = hexValue(digits[index]), let low = hexValue(digits[index + 1]) else { return nil }
      bytes.append(high << 4 | low)
      index += 2
    }
    return bytes
  }

  /// The value of one hex digit.
  private static func hexValue(_ digit: UInt8) -> UInt8? {
    switch digit {
    case UInt8(ascii: "0")...UInt8(ascii: "9"): digit - UInt8(ascii: "0")
    case UInt8(ascii: "a")...UInt8(ascii: "f"): digit - UInt8(ascii: "a") + 10
    case UInt8(ascii: "A")...UInt8(ascii: "F"): digit - UInt8(ascii: "A") + 10
    default: nil
    }
  }
}

/// Opens the `encrypted_data` field: AES-256-GCM through OpenSSL's libcrypto.
///
/// The field is the base64 of `nonce (12 bytes) ‖ ciphertext ‖ tag (16 bytes)`, with no
/// additional authenticated data. Nothing is returned unless the tag verifies.
public enum Decryptor {
  /// The nonce length.
  public static let nonceLength = 12
  /// The authentication tag length.
  public static let tagLength = 16

  /// Why a field could not be opened.
  public struct Failure: Error, Equatable, CustomStringConvertible {
    /// One sentence for the trace.
    public let description: String
  }

  /// Decrypts and authenticates the base64 text `field` with `key`.
  /// - Throws: ``Failure`` for bad base64, a sealed box too short, or a tag that does not verify
  ///   (a wrong key or altered bytes).
  public static func open(_ field: String, key: DecryptionKey) throws(Failure) -> [UInt8] {
    let compact = field.filter { !$0.isWhitespace }
    guard let data = Data(base64Encoded: compact) else {
      throw Failure(description: "encrypted_data is not base64")
    }
    let sealed = Array(data)
    guard sealed.count >= nonceLength + tagLength else {
      throw Failure(description: "encrypted_data is \(sealed.count) bytes, shorter than a nonce and a tag")
    }
    let nonce = Array(sealed[..<nonceLength])
    let ciphertext = Array(sealed[nonceLength..<(sealed.count - tagLength)])
    let tag = Array(sealed[(sealed.count - tagLength)...])
    return try decrypt(ciphertext, key: key.bytes, nonce: nonce, tag: tag)
  }

  /// AES-256-GCM decryption with libcrypto's EVP interface.
  private static func decrypt(
    _ ciphertext: [UInt8], key: [UInt8], nonce: [UInt8], tag: [UInt8]
  ) throws(Failure) -> [UInt8] {
    guard let context = EVP_CIPHER_CTX_new() else {
      throw Failure(description: "libcrypto: no cipher context")
    }
    defer { EVP_CIPHER_CTX_free(context) }
    guard EVP_DecryptInit_ex(context, EVP_aes_256_gcm(), nil, nil, nil) == 1,
      EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_GCM_SET_IVLEN, Int32(nonce.count), nil) == 1,
      EVP_DecryptInit_ex(context, nil, nil, key, nonce) == 1
    else {
      ERR_clear_error()
      throw Failure(description: "libcrypto: cannot set up AES-256-GCM")
    }
    // One block of slack: GCM is a stream mode, but EVP's contract allows it.
    var plaintext = [UInt8](repeating: 0, count: ciphertext.count + 16)
    var written: Int32 = 0
    let updated = plaintext.withUnsafeMutableBufferPointer { out in
      EVP_DecryptUpdate(context, out.baseAddress, &written, ciphertext, Int32(ciphertext.count))
    }
    var tagBytes = tag
    let tagSet = tagBytes.withUnsafeMutableBytes { bytes in
      EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_GCM_SET_TAG, Int32(bytes.count), bytes.baseAddress)
    }
    guard updated == 1, tagSet == 1 else {
      ERR_clear_error()
      throw Failure(description: "libcrypto: AES-256-GCM decryption failed")
    }
    var finalWritten: Int32 = 0
    let verified = plaintext.withUnsafeMutableBufferPointer { out in
      EVP_DecryptFinal_ex(context, out.baseAddress.map { $0 + Int(written) }, &finalWritten)
    }
    guard verified == 1 else {
      ERR_clear_error()
      // Unauthenticated plaintext must not linger.
      for index in plaintext.indices { plaintext[index] = 0 }
      throw Failure(description: "the authentication tag does not verify (wrong key or altered data)")
    }
    return Array(plaintext[..<Int(written + finalWritten)])
  }
}

/// The alert text carried in `encrypted_data`: a JSON object whose string fields `title`,
/// `subtitle` and `body` replace the visible ones.
public struct DecryptedAlert: Sendable, Equatable {
  /// The new title, when given.
  public var title: String?
  /// The new subtitle, when given.
  public var subtitle: String?
  /// The new body, when given.
  public var body: String?

  /// Reads the decrypted bytes.
  /// - Throws: ``Decryptor/Failure`` when they are not a JSON object with at least one of the
  ///   three fields as a string.
  public init(plaintext: [UInt8]) throws(Decryptor.Failure) {
    guard let value = JSONValue(data: Data(plaintext)), let fields = value.objectValue else {
      throw Decryptor.Failure(description: "the decrypted data is not a JSON object")
    }
    title = fields["title"]?.stringValue
    subtitle = fields["subtitle"]?.stringValue
    body = fields["body"]?.stringValue
    guard title != nil || subtitle != nil || body != nil else {
      throw Decryptor.Failure(description: "the decrypted object has no title, subtitle or body string")
    }
  }

  /// The names of the fields it replaces, for the trace.
  public var replacedFields: [String] {
    [("title", title), ("subtitle", subtitle), ("body", body)].compactMap { $0.1 == nil ? nil : $0.0 }
  }

  /// Puts the fields it carries into `content`.
  public func apply(to content: inout NotificationContent) {
    if let title { content.title = title }
    if let subtitle { content.subtitle = subtitle }
    if let body { content.body = body }
  }
}
