import CZlib

/// zlib, loaded on first use with `dlopen` (like libcrypto and libmagic: a cache hit, or a file
/// that is not a PNG, never maps it), for inflating a PNG's image data while it is validated.
/// `z_stream` comes from the header (module `CZlib`); the functions from the library.
struct Zlib: @unchecked Sendable {
  /// The loaded library, or `nil` when `libz.so.1` is not installed.
  static let shared: Zlib? = Zlib()

  /// `inflateInit2_(stream, windowBits, version, streamSize)`: `Z_OK` on success.
  let inflateInit2:
    @convention(c) (UnsafeMutablePointer<z_stream>?, Int32, UnsafePointer<CChar>?, Int32) -> Int32
  /// `inflate(stream, flush)`.
  let inflate: @convention(c) (UnsafeMutablePointer<z_stream>?, Int32) -> Int32
  /// `inflateEnd(stream)`.
  let inflateEnd: @convention(c) (UnsafeMutablePointer<z_stream>?) -> Int32
  /// `zlibVersion()`: the library's version, which `inflateInit2_` checks against.
  let version: @convention(c) () -> UnsafePointer<CChar>?

  private init?() {
    guard let library = SharedLibrary(["libz.so.1", "libz.so"]),
      let inflateInit2 = library.function(
        "inflateInit2_",
        as: (@convention(c) (UnsafeMutablePointer<z_stream>?, Int32, UnsafePointer<CChar>?, Int32) -> Int32)
          .self),
      let inflate = library.function(
        "inflate", as: (@convention(c) (UnsafeMutablePointer<z_stream>?, Int32) -> Int32).self),
      let inflateEnd = library.function(
        "inflateEnd", as: (@convention(c) (UnsafeMutablePointer<z_stream>?) -> Int32).self),
      let version = library.function("zlibVersion", as: (@convention(c) () -> UnsafePointer<CChar>?).self)
    else { return nil }
    self.inflateInit2 = inflateInit2
    self.inflate = inflate
    self.inflateEnd = inflateEnd
    self.version = version
  }
}

/// A zlib stream (RFC 1950) inflated a piece at a time into a small fixed buffer, keeping only
/// the count of bytes it yields: memory stays constant whatever the stream's size.
final class InflateCounter {
  /// What feeding a piece found.
  enum Outcome: Equatable {
    /// The stream needs more input.
    case needsInput
    /// The stream ended (its Adler-32 checked).
    case ended
    /// The count reached the `limit` given at creation; the rest was not inflated.
    case reachedLimit
    /// zlib refused the data: its message.
    case failed(String)
  }

  /// The bytes inflated so far.
  private(set) var produced = 0
  private let zlib: Zlib
  private let limit: Int
  /// The stream state, at a fixed address: zlib keeps a pointer back to it and checks it.
  private let stream: UnsafeMutablePointer<z_stream>
  private var output = [UInt8](repeating: 0, count: 262_144)

  /// A counter that stops once `limit` bytes have come out; nil when zlib cannot be loaded or
  /// initialised.
  init?(limit: Int) {
    guard let zlib = Zlib.shared else { return nil }
    let stream = UnsafeMutablePointer<z_stream>.allocate(capacity: 1)
    stream.initialize(to: z_stream())
    guard zlib.inflateInit2(stream, 15, zlib.version(), Int32(MemoryLayout<z_stream>.size)) == Z_OK else {
      stream.deallocate()
      return nil
    }
    self.zlib = zlib
    self.limit = limit
    self.stream = stream
  }

  deinit {
    _ = zlib.inflateEnd(stream)
    stream.deallocate()
  }

  /// Inflates `input` (all of it, unless the stream ends, fails or reaches the limit first).
  func feed(_ input: [UInt8]) -> Outcome {
    input.withUnsafeBufferPointer { source -> Outcome in
      stream.pointee.next_in = UnsafeMutablePointer(mutating: source.baseAddress)
      stream.pointee.avail_in = UInt32(source.count)
      defer {
        stream.pointee.next_in = nil
        stream.pointee.avail_in = 0
      }
      while true {
        let (status, made) = output.withUnsafeMutableBufferPointer { buffer -> (Int32, Int) in
          stream.pointee.next_out = buffer.baseAddress
          stream.pointee.avail_out = UInt32(buffer.count)
          let status = zlib.inflate(stream, Z_NO_FLUSH)
          let made = buffer.count - Int(stream.pointee.avail_out)
          stream.pointee.next_out = nil
          stream.pointee.avail_out = 0
          return (status, made)
        }
        produced += made
        if produced >= limit { return .reachedLimit }
        switch status {
        case Z_STREAM_END:
          return .ended
        case Z_OK:
          if stream.pointee.avail_in == 0 && made < output.count { return .needsInput }
        case Z_BUF_ERROR:
          // No progress possible: all input used (more is needed).
          return .needsInput
        default:
          let message = stream.pointee.msg.map { String(cString: $0) } ?? "error \(status)"
          return .failed(message)
        }
      }
    }
  }
}
