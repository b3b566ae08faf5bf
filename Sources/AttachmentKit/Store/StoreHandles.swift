import CCurl
import PosixLock

/// The store client's idle libcurl easy handles, kept between requests so that each keeps its
/// connection (and, over HTTPS, its TLS session) to the store: a store hit's two requests (the
/// record, then the content) and the next hits reuse one connection instead of opening one each.
/// A handle is used by one request at a time (taken, reset, used, given back); at most
/// ``maximumIdle`` are kept, and the rest are cleaned up. The handles go when the client does.
final class StoreHandles: Sendable {
  /// A libcurl easy handle, moved between threads one request at a time.
  struct Handle: @unchecked Sendable {
    let easy: UnsafeMutableRawPointer
  }

  /// The idle handles kept at most: about the requests a store runs at once (a serve's reads
  /// and its one writer).
  static let maximumIdle = 8

  private let idle = Locked<[Handle]>([])

  /// An idle handle, reset to libcurl's defaults (its connections kept), or a new one; `nil`
  /// when libcurl cannot make one.
  func take() -> UnsafeMutableRawPointer? {
    if let handle = idle.withLock({ $0.popLast() }) {
      curl_easy_reset(handle.easy)
      return handle.easy
    }
    return curl_easy_init()
  }

  /// Gives `easy` back after its request (cleaned up when enough are idle already).
  func give(_ easy: UnsafeMutableRawPointer) {
    let kept = idle.withLock { handles -> Bool in
      guard handles.count < Self.maximumIdle else { return false }
      handles.append(Handle(easy: easy))
      return true
    }
    if !kept { curl_easy_cleanup(easy) }
  }

  deinit {
    for handle in idle.withLock({ $0 }) { curl_easy_cleanup(handle.easy) }
  }
}
