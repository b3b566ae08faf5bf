import Glibc

/// libcrypto (OpenSSL 3), loaded on first use with `dlopen`, for SHA-256 of downloaded and
/// verified content, and for the HMAC-SHA256 and constant-time comparison of signed URLs. Linking it would map it into every process at start, and its first
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
        "CRYPTO_memcmp", as: (@convention(c) (UnsafeRawPointer?, UnsafeRawPointer?, Int) -> Int32).self)
    else { return nil }
    self.contextNew = contextNew
    self.contextFree = contextFree
    self.digestInit = digestInit
    self.digestUpdate = digestUpdate
    self.digestFinal = digestFinal
    self.sha256 = sha256
    self.hmac = hmac
    self.constantTimeCompare = constantTimeCompare
  }
}
