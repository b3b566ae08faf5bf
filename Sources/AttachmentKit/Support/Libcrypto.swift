import Glibc

/// libcrypto (OpenSSL 3), loaded on first use with `dlopen`, for SHA-256 of downloaded and
/// verified content, for the HMAC-SHA256 and constant-time comparison of signed URLs, and for
/// the AES-256-GCM and random nonces of `attachkit serve`'s hidden-origin paths. Linking it would map it into every process at start, and its first
/// use reads `openssl.cnf` and initialises providers (about 0.5 ms), so a path that never hashes
/// content (a cache hit) never loads it. EVP's context and digest types are opaque, so their
/// pointers are `OpaquePointer` and no header is needed.
package struct Libcrypto: @unchecked Sendable {
  /// The loaded library, or `nil` when `libcrypto.so.3` is not installed.
  package static let shared: Libcrypto? = Libcrypto()

  package let contextNew: @convention(c) () -> OpaquePointer?
  package let contextFree: @convention(c) (OpaquePointer?) -> Void
  package let digestInit: @convention(c) (OpaquePointer?, OpaquePointer?, OpaquePointer?) -> Int32
  package let digestUpdate: @convention(c) (OpaquePointer?, UnsafeRawPointer?, Int) -> Int32
  package let digestFinal:
    @convention(c) (OpaquePointer?, UnsafeMutablePointer<UInt8>?, UnsafeMutablePointer<UInt32>?) -> Int32
  package let sha256: @convention(c) () -> OpaquePointer?
  /// `HMAC(md, key, keyLength, data, dataLength, out, outLength)`, one shot.
  package let hmac:
    @convention(c) (
      OpaquePointer?, UnsafeRawPointer?, Int32, UnsafePointer<UInt8>?, Int, UnsafeMutablePointer<UInt8>?,
      UnsafeMutablePointer<UInt32>?
    ) -> UnsafeMutablePointer<UInt8>?
  /// `CRYPTO_memcmp(a, b, length)`: 0 when equal, in time independent of the contents.
  package let constantTimeCompare: @convention(c) (UnsafeRawPointer?, UnsafeRawPointer?, Int) -> Int32
  /// `EVP_CIPHER_CTX_new()`: a cipher context, freed with ``cipherContextFree``.
  package let cipherContextNew: @convention(c) () -> OpaquePointer?
  /// `EVP_CIPHER_CTX_free(context)`.
  package let cipherContextFree: @convention(c) (OpaquePointer?) -> Void
  /// `EVP_aes_256_gcm()`: the cipher (a 32-byte key; a 12-byte IV by default).
  package let aes256GCM: @convention(c) () -> OpaquePointer?
  /// `EVP_EncryptInit_ex(context, cipher, engine, key, iv)`: 1 on success.
  package let encryptInit: CipherInit
  /// `EVP_EncryptUpdate(context, out, outLength, in, inLength)`: 1 on success; `out` nil adds
  /// `in` as additional authenticated data.
  package let encryptUpdate: CipherUpdate
  /// `EVP_EncryptFinal_ex(context, out, outLength)`: 1 on success (GCM writes no byte).
  package let encryptFinal: CipherFinal
  /// `EVP_DecryptInit_ex(context, cipher, engine, key, iv)`: 1 on success.
  package let decryptInit: CipherInit
  /// `EVP_DecryptUpdate(context, out, outLength, in, inLength)`: as ``encryptUpdate``.
  package let decryptUpdate: CipherUpdate
  /// `EVP_DecryptFinal_ex(context, out, outLength)`: 1 when the GCM tag set before it verifies.
  package let decryptFinal: CipherFinal
  /// `EVP_CIPHER_CTX_ctrl(context, type, argument, pointer)`: 1 on success (GCM's get/set tag).
  package let cipherControl: @convention(c) (OpaquePointer?, Int32, Int32, UnsafeMutableRawPointer?) -> Int32
  /// `RAND_bytes(buffer, count)`: 1 when `count` bytes of the CSPRNG were written.
  package let randomBytes: @convention(c) (UnsafeMutablePointer<UInt8>?, Int32) -> Int32

  /// `EVP_CTRL_GCM_GET_TAG` (`EVP_CTRL_AEAD_GET_TAG`): copy the tag out after the final call.
  package static let gcmGetTag: Int32 = 0x10
  /// `EVP_CTRL_GCM_SET_TAG` (`EVP_CTRL_AEAD_SET_TAG`): the expected tag, before the final call.
  package static let gcmSetTag: Int32 = 0x11

  /// The shape of `EVP_EncryptInit_ex` and `EVP_DecryptInit_ex`.
  package typealias CipherInit =
    @convention(c) (
      OpaquePointer?, OpaquePointer?, OpaquePointer?, UnsafePointer<UInt8>?, UnsafePointer<UInt8>?
    ) -> Int32
  /// The shape of `EVP_EncryptUpdate` and `EVP_DecryptUpdate`.
  package typealias CipherUpdate =
    @convention(c) (
      OpaquePointer?, UnsafeMutablePointer<UInt8>?, UnsafeMutablePointer<Int32>?, UnsafePointer<UInt8>?, Int32
    ) -> Int32
  /// The shape of `EVP_EncryptFinal_ex` and `EVP_DecryptFinal_ex`.
  package typealias CipherFinal =
    @convention(c) (OpaquePointer?, UnsafeMutablePointer<UInt8>?, UnsafeMutablePointer<Int32>?) -> Int32

  // flat table: one dlsym lookup per libcrypto function, then one assignment per property.
  private init?() {
    guard let library = SharedLibrary(["libcrypto.so.3", "libcrypto.so"]),
      let contextNew = library.function("EVP_MD_CTX_new", as: (@convention(c) () -> OpaquePointer?).self),
      let contextFree = library.function(
        "EVP_MD_CTX_free", as: (@convention(c) (OpaquePointer?) -> Void).self),
      let digestInit = library.function(
        "EVP_DigestInit_ex",
        as: (@convention(c) (OpaquePointer?, OpaquePointer?, OpaquePointer?) -> Int32).self),
      let digestUpdate = library.function(
        "EVP_DigestUpdate", as: (@convention(c) (OpaquePointer?, UnsafeRawPointer?, Int) -> Int32).self),
      let digestFinal = library.function(
        "EVP_DigestFinal_ex",
        as: (@convention(c) (OpaquePointer?, UnsafeMutablePointer<UInt8>?, UnsafeMutablePointer<UInt32>?) ->
          Int32)
          .self),
      let sha256 = library.function("EVP_sha256", as: (@convention(c) () -> OpaquePointer?).self),
      let hmac = library.function(
        "HMAC",
        as: (@convention(c) (
          OpaquePointer?, UnsafeRawPointer?, Int32, UnsafePointer<UInt8>?, Int, UnsafeMutablePointer<UInt8>?,
          UnsafeMutablePointer<UInt32>?
        ) -> UnsafeMutablePointer<UInt8>?).self),
      let constantTimeCompare = library.function(
        "CRYPTO_memcmp", as: (@convention(c) (UnsafeRawPointer?, UnsafeRawPointer?, Int) -> Int32).self),
      let cipherContextNew = library.function(
        "EVP_CIPHER_CTX_new", as: (@convention(c) () -> OpaquePointer?).self),
      let cipherContextFree = library.function(
        "EVP_CIPHER_CTX_free", as: (@convention(c) (OpaquePointer?) -> Void).self),
      let aes256GCM = library.function("EVP_aes_256_gcm", as: (@convention(c) () -> OpaquePointer?).self),
      let encryptInit = library.function("EVP_EncryptInit_ex", as: CipherInit.self),
      let encryptUpdate = library.function("EVP_EncryptUpdate", as: CipherUpdate.self),
      let encryptFinal = library.function("EVP_EncryptFinal_ex", as: CipherFinal.self),
      let decryptInit = library.function("EVP_DecryptInit_ex", as: CipherInit.self),
      let decryptUpdate = library.function("EVP_DecryptUpdate", as: CipherUpdate.self),
      let decryptFinal = library.function("EVP_DecryptFinal_ex", as: CipherFinal.self),
      let cipherControl = library.function(
        "EVP_CIPHER_CTX_ctrl",
        as: (@convention(c) (OpaquePointer?, Int32, Int32, UnsafeMutableRawPointer?) -> Int32).self),
      let randomBytes = library.function(
        "RAND_bytes", as: (@convention(c) (UnsafeMutablePointer<UInt8>?, Int32) -> Int32).self)
    else { return nil }
    self.contextNew = contextNew
    self.contextFree = contextFree
    self.digestInit = digestInit
    self.digestUpdate = digestUpdate
    self.digestFinal = digestFinal
    self.sha256 = sha256
    self.hmac = hmac
    self.constantTimeCompare = constantTimeCompare
    self.cipherContextNew = cipherContextNew
    self.cipherContextFree = cipherContextFree
    self.aes256GCM = aes256GCM
    self.encryptInit = encryptInit
    self.encryptUpdate = encryptUpdate
    self.encryptFinal = encryptFinal
    self.decryptInit = decryptInit
    self.decryptUpdate = decryptUpdate
    self.decryptFinal = decryptFinal
    self.cipherControl = cipherControl
    self.randomBytes = randomBytes
  }
}
