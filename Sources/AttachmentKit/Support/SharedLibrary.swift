import Glibc

/// A shared library opened at run time, so that a process which never needs it (a cache hit)
/// never pays for loading it and its dependencies.
struct SharedLibrary: @unchecked Sendable {
  private let handle: UnsafeMutableRawPointer

  /// Opens the first of `names` that loads, or returns `nil`.
  init?(_ names: [String]) {
    for name in names {
      if let handle = dlopen(name, RTLD_NOW | RTLD_LOCAL) {
        self.handle = handle
        return
      }
    }
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
