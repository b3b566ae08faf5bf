import Glibc

/// A streaming SHA-256 over OpenSSL's libcrypto (EVP interface), loaded on first use.
///
/// Not thread-safe: one hasher belongs to one transfer or one file at a time.
final class SHA256Hasher {
  private let library: Libcrypto?
  private let context: OpaquePointer?
  private var failed = false

  /// Starts a new digest. If libcrypto is missing or cannot allocate a context the hasher
  /// records the failure and ``finalize()`` returns `nil`.
  init() {
    library = Libcrypto.shared
    context = library?.contextNew()
    if let library, let context {
      failed = library.digestInit(context, library.sha256(), nil) != 1
    } else {
      failed = true
    }
  }

  deinit {
    if let context { library?.contextFree(context) }
  }

  /// Adds bytes to the digest.
  func update(_ bytes: UnsafeRawBufferPointer) {
    guard !failed, let library, let context, let base = bytes.baseAddress, bytes.count > 0 else { return }
    if library.digestUpdate(context, base, bytes.count) != 1 { failed = true }
  }

  /// Finishes the digest and returns it as 64 lower-case hex digits, or `nil` if libcrypto
  /// failed at any point. Call once.
  func finalize() -> String? {
    guard !failed, let library, let context else { return nil }
    var digest = [UInt8](repeating: 0, count: 32)
    var length: UInt32 = 0
    let ok = digest.withUnsafeMutableBufferPointer { buffer in
      library.digestFinal(context, buffer.baseAddress, &length) == 1
    }
    failed = true
    guard ok, length == 32 else { return nil }
    return Hex.encode(digest)
  }

  /// The SHA-256 of a whole file, read in 256 KiB pieces (constant memory), or `nil` when the
  /// file cannot be read. `extraFlags` are added to `open` (the cache passes `O_NOFOLLOW |
  /// O_NONBLOCK`).
  static func hashFile(atPath path: String, extraFlags: Int32 = 0) -> (digest: String, bytes: Int64)? {
    let fd = open(path, O_RDONLY | O_CLOEXEC | extraFlags)
    guard fd >= 0 else { return nil }
    defer { close(fd) }
    return copy(fd, to: nil, maximumBytes: .max)
  }

  /// Reads the file open at `source` (from its current offset to its end), hashing it and
  /// copying it to `destination` when there is one, in 256 KiB pieces (constant memory); stops
  /// with `nil` past `maximumBytes`, at `deadline`, or when a read or a write fails.
  /// - Returns: the SHA-256 of what was read and its length.
  static func copy(
    _ source: Int32, to destination: Int32?, maximumBytes: Int64, deadline: ContinuousClock.Instant? = nil
  ) -> (digest: String, bytes: Int64)? {
    let hasher = SHA256Hasher()
    let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 256 * 1024, alignment: 16)
    defer { buffer.deallocate() }
    var total: Int64 = 0
    while deadline.map({ ContinuousClock.now < $0 }) ?? true {
      let count = read(source, buffer.baseAddress, buffer.count)
      if count < 0 {
        if errno == EINTR { continue }
        return nil
      }
      if count == 0 { return hasher.finalize().map { ($0, total) } }
      total += Int64(count)
      guard total <= maximumBytes else { return nil }
      let piece = UnsafeRawBufferPointer(rebasing: buffer[0..<count])
      hasher.update(piece)
      if let destination, !writeAll(piece, to: destination) { return nil }
    }
    return nil
  }

  /// Writes all of `bytes` to `descriptor`; whether it could.
  private static func writeAll(_ bytes: UnsafeRawBufferPointer, to descriptor: Int32) -> Bool {
    var written = 0
    while written < bytes.count {
      let wrote = write(descriptor, bytes.baseAddress.map { $0 + written }, bytes.count - written)
      if wrote < 0 && errno == EINTR { continue }
      guard wrote > 0 else { return false }
      written += wrote
    }
    return true
  }
}

/// Hexadecimal: lower-case encoding, and the value of one digit.
package enum Hex {
  /// The value of the hex digit `byte` (`0-9`, `a-f`, `A-F`), or `nil`.
  package static func value(of byte: UInt8) -> UInt8? {
    switch byte {
    case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
    case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
    case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
    default: nil
    }
  }

  private static let digits: [UInt8] = Array("0123456789abcdef".utf8)

  /// The bytes as lower-case hex digits, two per byte.
  package static func encode(_ bytes: some Sequence<UInt8>) -> String {
    var out: [UInt8] = []
    out.reserveCapacity(64)
    for byte in bytes {
      out.append(digits[Int(byte >> 4)])
      out.append(digits[Int(byte & 0x0F)])
    }
    return String(decoding: out, as: UTF8.self)
  }
}
