#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

/// Why a `FileBytes` could not be made for a path.
enum FileBytesError: Error, Sendable, Equatable {
  /// `open` failed with this errno (missing file, permissions, ...).
  case openFailed(errno: Int32)
  /// `fstat` on the open descriptor failed with this errno.
  case statFailed(errno: Int32)
  /// The path is not a regular file (a directory, FIFO, device, ...).
  case notRegularFile
  /// The path is a directory.
  case directory

  /// The system's reason, for a message (`strerror`: "No such file or directory", "Is a
  /// directory"; "Not a regular file" for a FIFO, device or socket).
  var reason: String {
    switch self {
    case .openFailed(let code), .statFailed(let code): String(cString: strerror(code))
    case .directory: String(cString: strerror(EISDIR))
    case .notRegularFile: "Not a regular file"
    }
  }
}

/// Read-only random access to the bytes of a file, by `pread` on a descriptor that stays open
/// for the object's lifetime, or to bytes held in memory (tests, prefixes).
///
/// The file is never read whole: callers ask for small ranges (see `ByteReader`). The size is
/// taken once, at open; a file that shrinks afterwards makes reads fail (nil), never trap.
final class FileBytes: Sendable {
  /// Where the bytes live.
  private enum Storage: Sendable {
    /// An open read-only descriptor, closed in `deinit`.
    case descriptor(Int32)
    /// An in-memory copy.
    case memory([UInt8])
  }

  private let storage: Storage
  /// The number of bytes (the file size at open).
  let count: Int64
  /// Hashes the file from the reads made through ``read(into:at:)``, when asked for.
  let digest: ReadAlongDigest?

  /// Opens `path` read-only; with `digesting`, ``digest`` hashes the bytes as they are read
  /// (finish it with ``ReadAlongDigest/finish(reading:)``). Throws when it cannot be opened,
  /// is a directory or another file that is not a regular one, or its size cannot be read.
  init(path: String, digesting: Bool = false) throws(FileBytesError) {
    let descriptor = open(path, O_RDONLY | O_CLOEXEC)
    guard descriptor >= 0 else { throw .openFailed(errno: errno) }
    var info = stat()
    guard fstat(descriptor, &info) == 0 else {
      let code = errno
      close(descriptor)
      throw .statFailed(errno: code)
    }
    if (info.st_mode & S_IFMT) == S_IFDIR {
      close(descriptor)
      throw .directory
    }
    guard (info.st_mode & S_IFMT) == S_IFREG, let size = Int64(exactly: info.st_size), size >= 0,
      Int(exactly: size) != nil
    else {
      close(descriptor)
      throw .notRegularFile
    }
    storage = .descriptor(descriptor)
    count = size
    digest = digesting ? ReadAlongDigest() : nil
  }

  /// Bytes held in memory, for tests and for probing a prefix with the same code.
  init(bytes: [UInt8]) {
    storage = .memory(bytes)
    count = Int64(bytes.count)
    digest = nil
  }

  /// Closes the descriptor, if any.
  deinit {
    if case .descriptor(let descriptor) = storage { close(descriptor) }
  }

  /// The bytes when they live in memory (so a reader can use them without copying), else nil.
  var memoryBytes: [UInt8]? {
    if case .memory(let bytes) = storage { return bytes }
    return nil
  }

  /// Fills `buffer` with the bytes at `offset`. Returns false (buffer contents unspecified)
  /// when the range is outside the file or the read fails or comes up short. The bytes read
  /// go to ``digest``, if any.
  func read(into buffer: UnsafeMutableRawBufferPointer, at offset: Int) -> Bool {
    guard readUnobserved(into: buffer, at: offset) else { return false }
    digest?.saw(UnsafeRawBufferPointer(buffer), at: Int64(offset))
    return true
  }

  /// ``read(into:at:)`` without telling ``digest`` (which reads through this itself).
  func readUnobserved(into buffer: UnsafeMutableRawBufferPointer, at offset: Int) -> Bool {
    guard offset >= 0, let end = ProbeMath.add(offset, buffer.count), Int64(end) <= count else {
      return false
    }
    guard buffer.count > 0 else { return true }
    switch storage {
    case .memory(let bytes):
      bytes.withUnsafeBytes { source in
        buffer.copyMemory(from: UnsafeRawBufferPointer(rebasing: source[offset..<end]))
      }
      return true
    case .descriptor(let descriptor):
      return Self.readFully(descriptor, into: buffer, at: offset)
    }
  }

  /// Up to `length` bytes from `offset`: fewer at the end of the file, none when `offset` is
  /// outside the file, `length` is not positive, or the read fails. For small reads (headers,
  /// a sniffing window); a `length` over 1 MiB is cut to 1 MiB.
  func bytes(at offset: Int64, count length: Int) -> [UInt8] {
    guard offset >= 0, offset < count, length > 0, let start = Int(exactly: offset) else { return [] }
    let available = Int(clamping: min(Int64(min(length, 1 << 20)), count - offset))
    var buffer = [UInt8](repeating: 0, count: available)
    let ok = buffer.withUnsafeMutableBytes { read(into: $0, at: start) }
    return ok ? buffer : []
  }

  /// `pread` until `buffer` is full, retrying on EINTR; false on error or end of file.
  private static func readFully(
    _ descriptor: Int32, into buffer: UnsafeMutableRawBufferPointer, at offset: Int
  ) -> Bool {
    guard let base = buffer.baseAddress else { return buffer.isEmpty }
    var done = 0
    while done < buffer.count {
      let got = pread(
        descriptor, base + done, buffer.count - done, off_t(offset + done))
      if got > 0 {
        done += got
      } else if got < 0 && errno == EINTR {
        continue
      } else {
        return false
      }
    }
    return true
  }
}
