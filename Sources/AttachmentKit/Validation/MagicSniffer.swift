import CMagic
import Dispatch
import PosixLock

/// libmagic's opinion of the first bytes of a file, as a MIME type.
///
/// libmagic itself is opened with `dlopen`, and its database (`/usr/lib/file/magic.mgc`,
/// memory-mapped) loaded, once per process on the first call, never before: a cache hit never
/// pays for either. A `magic_t` is not thread-safe and
/// keeps its answer inside itself, so one cookie sits behind a lock and the answer is copied
/// before the lock is released.
enum MagicSniffer {
  /// How many bytes libmagic looks at: enough for every accepted type (see the reference
  /// notes on libmagic 5.44).
  static let windowBytes = 4096

  /// A libmagic handle; only ever used under the lock below.
  private struct Cookie: @unchecked Sendable { let pointer: OpaquePointer }

  private static let cookie = Locked<Cookie?>(nil)

  /// Starts loading libmagic and its database on a background thread, if no call has yet,
  /// so that a download's first judgement does not wait for it: the load (about 10 ms) then
  /// overlaps libcurl's start, the connection and the response head. Called when a sniffer is
  /// made, that is on a cache miss, never on a hit.
  static func prepare() {
    BackgroundWork.start("AttachmentKit.libmagic-load") {
      cookie.withLock { cookie in
        if cookie == nil { cookie = load() }
      }
    }
  }

  /// The MIME type libmagic gives `bytes` (only the first ``windowBytes`` are looked at), or
  /// `nil` when the database cannot be loaded. An MPEG transport stream is named by its packets
  /// first (``TransportStreamPackets``: libmagic names one only when it begins with a PAT),
  /// without asking libmagic.
  static func mimeType(of bytes: UnsafeRawBufferPointer) -> String? {
    let window = UnsafeRawBufferPointer(rebasing: bytes.prefix(windowBytes))
    if TransportStreamPackets.packetSize(of: window) != nil { return TransportStreamPackets.mime }
    return cookie.withLock { cookie -> String? in
      if cookie == nil {
        cookie = load()
      }
      guard let cookie else { return nil }
      guard let buffer = Libmagic.shared?.buffer,
        let answer = buffer(cookie.pointer, window.baseAddress, window.count)
      else {
        return nil
      }
      return String(cString: answer)
    }
  }

  private static func load() -> Cookie? {
    guard let library = Libmagic.shared,
      let cookie = library.open(MAGIC_MIME_TYPE | MAGIC_NO_CHECK_COMPRESS | MAGIC_NO_CHECK_ELF)
    else { return nil }
    guard library.load(cookie, nil) == 0 else {
      library.close(cookie)
      return nil
    }
    return Cookie(pointer: cookie)
  }
}

/// libmagic's four functions, resolved at run time.
private struct Libmagic: @unchecked Sendable {
  static let shared: Libmagic? = Libmagic()

  let open: @convention(c) (Int32) -> OpaquePointer?
  let load: @convention(c) (OpaquePointer?, UnsafePointer<CChar>?) -> Int32
  let buffer: @convention(c) (OpaquePointer?, UnsafeRawPointer?, Int) -> UnsafePointer<CChar>?
  let close: @convention(c) (OpaquePointer?) -> Void

  private init?() {
    guard let library = SharedLibrary(["libmagic.so.1", "libmagic.so"]),
      let open = library.function("magic_open", as: (@convention(c) (Int32) -> OpaquePointer?).self),
      let load = library.function(
        "magic_load", as: (@convention(c) (OpaquePointer?, UnsafePointer<CChar>?) -> Int32).self),
      let buffer = library.function(
        "magic_buffer",
        as: (@convention(c) (OpaquePointer?, UnsafeRawPointer?, Int) -> UnsafePointer<CChar>?).self),
      let close = library.function("magic_close", as: (@convention(c) (OpaquePointer?) -> Void).self)
    else { return nil }
    self.open = open
    self.load = load
    self.buffer = buffer
    self.close = close
  }
}
