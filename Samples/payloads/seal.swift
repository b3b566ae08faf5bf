// seal.swift KEY-FILE PLAINTEXT: prints base64(nonce ‖ ciphertext ‖ tag), AES-256-GCM through
// libcrypto, a fresh random 12-byte nonce, no additional data. The encrypt side of
// encrypted_data, run by make-encrypted.sh with the swift interpreter (no package build).
import CCrypto
import Foundation

/// Prints `message` to standard error and exits with status 1.
func fail(_ message: String) -> Never {
  FileHandle.standardError.write(Data("seal: \(message)\n".utf8))
  exit(1)
}

/// The 32 bytes of a key file holding 64 hex digits.
func readKey(_ path: String) -> [UInt8] {
  guard let data = FileManager.default.contents(atPath: path),
    let text = String(data: data, encoding: .utf8)?.trimmingCharacters(in: .whitespacesAndNewlines),
    text.utf8.count == 64
  else { fail("\(path) does not hold 64 hex digits") }
  var bytes: [UInt8] = []
  var index = text.startIndex
  while index < text.endIndex {
    let next = text.index(index, offsetBy: 2)
    guard let byte = UInt8(text[index..<next], radix: 16) else { fail("\(path) is not hex") }
    bytes.append(byte)
    index = next
  }
  return bytes
}

/// AES-256-GCM encryption: nonce ‖ ciphertext ‖ tag.
func seal(_ plaintext: [UInt8], key: [UInt8]) -> [UInt8] {
  var generator = SystemRandomNumberGenerator()
  let nonce = (0..<12).map { _ in UInt8.random(in: 0...255, using: &generator) }
  guard let context = EVP_CIPHER_CTX_new() else { fail("no cipher context") }
  defer { EVP_CIPHER_CTX_free(context) }
  var ciphertext = [UInt8](repeating: 0, count: plaintext.count + 16)
  var tag = [UInt8](repeating: 0, count: 16)
  var written: Int32 = 0
  var finalWritten: Int32 = 0
  guard EVP_EncryptInit_ex(context, EVP_aes_256_gcm(), nil, nil, nil) == 1,
    EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_GCM_SET_IVLEN, 12, nil) == 1,
    EVP_EncryptInit_ex(context, nil, nil, key, nonce) == 1,
    EVP_EncryptUpdate(context, &ciphertext, &written, plaintext, Int32(plaintext.count)) == 1,
    ciphertext.withUnsafeMutableBufferPointer({ buffer in
      EVP_EncryptFinal_ex(context, buffer.baseAddress.map { $0 + Int(written) }, &finalWritten)
    }) == 1,
    EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_GCM_GET_TAG, 16, &tag) == 1
  else { fail("AES-256-GCM encryption failed") }
  return nonce + ciphertext[..<Int(written + finalWritten)] + tag
}

let arguments = CommandLine.arguments.dropFirst()
guard arguments.count == 2, let keyFile = arguments.first, let plaintext = arguments.last else {
  fail("usage: seal.swift KEY-FILE PLAINTEXT")
}
print(Data(seal(Array(plaintext.utf8), key: readKey(keyFile))).base64EncodedString())
