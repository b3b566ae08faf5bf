import Glibc
import PosixLock

/// A shared library opened at run time, so that a process which never needs it (a cache hit)
/// never pays for loading it and its dependencies.
struct SharedLibrary: @unchecked Sendable {
  private let handle: UnsafeMutableRawPointer

  /// Why the last library that could not be opened failed (`dlerror`'s text for its last
  /// name), or `nil` when none failed: a missing file reads otherwise than a load that ran out
  /// of address space under a rescue worker's ceiling.
  static var lastFailure: String? { failure.withLock { $0 } }
  private static let failure = Locked<String?>(nil)

  /// Opens the first of `names` that loads, or returns `nil` (see ``lastFailure``).
  ///
  /// `lazy` binds the library's and its dependencies' functions at their first call
  /// (`RTLD_LAZY`) instead of all at once: libvips' ~90 libraries open in about 30 ms instead of
  /// 40, on the critical path of every rescue worker's start (an executable linked against them
  /// binds lazily too). The functions this process calls are still resolved here, with `dlsym`.
  init?(_ names: [String], lazy: Bool = false) {
    var reason: String?
    for name in names {
      if let handle = dlopen(name, (lazy ? RTLD_LAZY : RTLD_NOW) | RTLD_LOCAL) {
        self.handle = handle
        return
      }
      reason = dlerror().map { String(cString: $0) }
    }
    Self.failure.withLock { $0 = reason }
    return nil
  }

  /// The address of a symbol, or `nil`.
  func symbol(_ name: String) -> UnsafeMutableRawPointer? {
    dlsym(handle, name)
  }

  /// A function symbol as the C function type `T`, or `nil`.
  func function<T>(_ name: String, as type: T.Type) -> T? {
    guard let pointer = dlsym(handle, name) else { return nil }
    return unsafeBitCast(pointer, to: type)
  }
}
