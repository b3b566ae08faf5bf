import CCurl

/// What a TLS connection was, as App Transport Security judges it: the protocol version and
/// whether its key exchange gives forward secrecy. Read from OpenSSL through libcurl
/// (`CURLINFO_TLS_SSL_PTR`) while the response's headers arrive, when the connection is
/// certainly open.
public struct TLSFacts: Sendable, Equatable {
  /// OpenSSL's name of the version: `TLSv1.3`, `TLSv1.2`, …
  public var version: String
  /// The version number (`0x0304` for TLS 1.3, `0x0303` for 1.2).
  public var versionNumber: Int
  /// Whether the key exchange was ephemeral (ECDHE or DHE; every TLS 1.3 suite is).
  public var forwardSecrecy: Bool

  /// Makes facts (tests, and the reader below).
  public init(version: String, versionNumber: Int, forwardSecrecy: Bool) {
    self.version = version
    self.versionNumber = versionNumber
    self.forwardSecrecy = forwardSecrecy
  }

  /// The facts of the connection `easy` uses now, or `nil` when it is not TLS over OpenSSL or
  /// libssl lacks a function. Never throws; called from libcurl's header callback.
  static func read(_ easy: UnsafeMutableRawPointer?) -> TLSFacts? {
    var session: UnsafeMutablePointer<curl_tlssessioninfo>?
    guard ak_easy_getinfo_tls_session(easy, &session) == CURLE_OK, let session,
      session.pointee.backend == CURLSSLBACKEND_OPENSSL, let ssl = session.pointee.internals,
      let library = LibSSL.shared
    else { return nil }
    let number = Int(library.version(ssl))
    let name = library.versionName(ssl).map { String(cString: $0) } ?? "TLS"
    guard let cipher = library.currentCipher(ssl) else { return nil }
    let exchange = library.keyExchange(cipher)
    let ephemeral: Set<Int32> = [
      LibSSL.kxECDHE, LibSSL.kxDHE, LibSSL.kxECDHEPSK, LibSSL.kxDHEPSK, LibSSL.kxAny,
    ]
    return TLSFacts(
      version: name, versionNumber: number, forwardSecrecy: number >= 0x0304 || ephemeral.contains(exchange))
  }
}

/// The four libssl functions ``TLSFacts`` needs, resolved from the libssl libcurl already
/// mapped (opening it again costs a reference, not a load).
private struct LibSSL: @unchecked Sendable {
  static let shared: LibSSL? = LibSSL()

  /// OpenSSL's key-exchange NIDs (obj_mac.h) that are ephemeral; `kxAny` is TLS 1.3's.
  static let kxECDHE: Int32 = 1038
  static let kxDHE: Int32 = 1039
  static let kxECDHEPSK: Int32 = 1040
  static let kxDHEPSK: Int32 = 1041
  static let kxAny: Int32 = 1063

  let version: @convention(c) (UnsafeMutableRawPointer?) -> Int32
  let versionName: @convention(c) (UnsafeMutableRawPointer?) -> UnsafePointer<CChar>?
  let currentCipher: @convention(c) (UnsafeMutableRawPointer?) -> OpaquePointer?
  let keyExchange: @convention(c) (OpaquePointer?) -> Int32

  private init?() {
    guard let library = SharedLibrary(["libssl.so.3", "libssl.so"]),
      let version = library.function(
        "SSL_version", as: (@convention(c) (UnsafeMutableRawPointer?) -> Int32).self),
      let versionName = library.function(
        "SSL_get_version", as: (@convention(c) (UnsafeMutableRawPointer?) -> UnsafePointer<CChar>?).self),
      let currentCipher = library.function(
        "SSL_get_current_cipher", as: (@convention(c) (UnsafeMutableRawPointer?) -> OpaquePointer?).self),
      let keyExchange = library.function(
        "SSL_CIPHER_get_kx_nid", as: (@convention(c) (OpaquePointer?) -> Int32).self)
    else { return nil }
    self.version = version
    self.versionName = versionName
    self.currentCipher = currentCipher
    self.keyExchange = keyExchange
  }
}
