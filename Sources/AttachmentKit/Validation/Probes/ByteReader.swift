#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

/// Bounds-checked big- and little-endian reads from a `FileBytes` through a 64 KiB window, so a
/// walk over headers costs one `pread` per window, and never more than the window is resident.
///
/// Every read returns nil when any byte of it lies outside `0..<count`; nothing traps.
/// Not thread-safe: one reader per walk.
///
/// A reader also keeps the walk's work budget: every read counts (one unit, plus one per 8
/// bytes read), and once the units pass ``readsPerByte`` × `count` + ``baseReads``, or its
/// ``StopSignal`` says stop (deadline passed, request cancelled, or the calling task cancelled;
/// checked every ``checkInterval`` units), ``stop`` says why and every later
/// read returns nil, so any loop over the bytes ends at once. Callers look at ``stop`` before
/// believing a verdict.
final class ByteReader {
  /// The size of the window (and the largest range `bytes(at:count:)` returns).
  static let windowSize = 65_536
  /// Read units allowed per byte of the file: the walks read each value a few times at most.
  static let readsPerByte = 16
  /// Read units allowed on top of the per-byte share, for small files with many small headers.
  static let baseReads = 4_000_000
  /// How many read units pass between two looks at the clock and the task's cancellation.
  static let checkInterval = 4_096

  /// Why the walk over this reader was stopped, or nil while it may go on.
  private(set) var stop: ProbeStop?
  private var reads = 0
  private let maximumReads: Int
  private let signal: StopSignal?

  /// The bytes read.
  let file: FileBytes
  /// The number of readable bytes.
  let count: Int
  private var window: [UInt8]
  private var windowStart = 0
  private let inMemory: Bool

  /// A reader over `file`; in-memory bytes are used in place, without a copy. `signal`, when
  /// given, stops the walk once it says so (see ``stop``).
  init(_ file: FileBytes, signal: StopSignal? = nil) {
    self.file = file
    self.count = Int(exactly: file.count) ?? 0
    self.signal = signal
    self.maximumReads =
      ProbeMath.add(ProbeMath.multiply(count, Self.readsPerByte) ?? .max, Self.baseReads) ?? .max
    if let bytes = file.memoryBytes {
      window = bytes
      inMemory = true
    } else {
      window = []
      inMemory = false
    }
  }

  /// A reader over bytes in memory (tests, prefixes).
  convenience init(bytes: [UInt8]) {
    self.init(FileBytes(bytes: bytes))
  }

  /// Whether `length` bytes at `offset` lie inside the file (false on negative or overflowing
  /// values).
  func contains(_ offset: Int, _ length: Int) -> Bool {
    guard offset >= 0, let end = ProbeMath.add(offset, length) else { return false }
    return end <= count
  }

  /// The index in `window` of `offset`, after making sure `length` bytes from there are in it;
  /// nil when the range is outside the file, longer than the window, or the read fails.
  private func locate(_ offset: Int, _ length: Int) -> Int? {
    // A read costs one unit plus one per 8 bytes, so reading many bytes at once counts too.
    let before = reads
    reads = reads &+ 1 &+ max(0, length) >> 3
    if reads / Self.checkInterval != before / Self.checkInterval || reads > maximumReads { checkBudget() }
    guard stop == nil, length <= Self.windowSize, contains(offset, length) else { return nil }
    let relative = offset - windowStart
    if relative >= 0, relative <= window.count - length { return relative }
    guard !inMemory else { return nil }
    let size = min(Self.windowSize, count - offset)
    if window.count != size { window = [UInt8](repeating: 0, count: size) }
    let ok = window.withUnsafeMutableBytes { file.read(into: $0, at: offset) }
    guard ok else {
      window = []
      windowStart = 0
      return nil
    }
    windowStart = offset
    return 0
  }

  /// Sets ``stop`` when the reads are over budget, or the signal (or the calling task's
  /// cancellation, without one) says stop.
  private func checkBudget() {
    guard stop == nil else { return }
    if reads > maximumReads {
      stop = .workBudget
    } else if let signal {
      stop = signal.reason
    } else if Task.isCancelled {
      stop = .cancelled
    }
  }

  /// The byte at `offset`, or nil outside the file.
  func u8(_ offset: Int) -> UInt8? {
    guard let index = locate(offset, 1) else { return nil }
    return window[index]
  }

  /// `length` (at most `windowSize`) bytes at `offset`, or nil when any is outside the file.
  func bytes(at offset: Int, count length: Int) -> [UInt8]? {
    guard length >= 0 else { return nil }
    guard let index = locate(offset, length) else { return nil }
    return Array(window[index..<(index + length)])
  }

  /// Whether the bytes at `offset` equal `expected`; false when they are outside the file.
  func matches(_ expected: [UInt8], at offset: Int) -> Bool {
    guard let index = locate(offset, expected.count) else { return false }
    for (position, byte) in expected.enumerated() where window[index + position] != byte {
      return false
    }
    return true
  }

  /// An unsigned big-endian integer of `width` (1...8) bytes at `offset`, or nil.
  private func bigEndian(_ offset: Int, _ width: Int) -> UInt64? {
    guard width >= 1, width <= 8, let index = locate(offset, width) else { return nil }
    var value: UInt64 = 0
    for position in index..<(index + width) { value = value << 8 | UInt64(window[position]) }
    return value
  }

  /// An unsigned little-endian integer of `width` (1...8) bytes at `offset`, or nil.
  private func littleEndian(_ offset: Int, _ width: Int) -> UInt64? {
    guard width >= 1, width <= 8, let index = locate(offset, width) else { return nil }
    var value: UInt64 = 0
    for position in (index..<(index + width)).reversed() {
      value = value << 8 | UInt64(window[position])
    }
    return value
  }

  /// Big-endian UInt16 at `offset`, or nil.
  func u16be(_ offset: Int) -> UInt16? { bigEndian(offset, 2).map { UInt16(truncatingIfNeeded: $0) } }
  /// Little-endian UInt16 at `offset`, or nil.
  func u16le(_ offset: Int) -> UInt16? { littleEndian(offset, 2).map { UInt16(truncatingIfNeeded: $0) } }
  /// Big-endian 24-bit value at `offset`, or nil.
  func u24be(_ offset: Int) -> UInt32? { bigEndian(offset, 3).map { UInt32(truncatingIfNeeded: $0) } }
  /// Big-endian UInt32 at `offset`, or nil.
  func u32be(_ offset: Int) -> UInt32? { bigEndian(offset, 4).map { UInt32(truncatingIfNeeded: $0) } }
  /// Little-endian UInt32 at `offset`, or nil.
  func u32le(_ offset: Int) -> UInt32? { littleEndian(offset, 4).map { UInt32(truncatingIfNeeded: $0) } }
  /// Big-endian UInt64 at `offset`, or nil.
  func u64be(_ offset: Int) -> UInt64? { bigEndian(offset, 8) }
  /// Little-endian UInt64 at `offset`, or nil.
  func u64le(_ offset: Int) -> UInt64? { littleEndian(offset, 8) }

  /// UInt16 at `offset` in the given byte order, or nil.
  func u16(_ offset: Int, littleEndian little: Bool) -> UInt16? {
    little ? u16le(offset) : u16be(offset)
  }

  /// UInt32 at `offset` in the given byte order, or nil.
  func u32(_ offset: Int, littleEndian little: Bool) -> UInt32? {
    little ? u32le(offset) : u32be(offset)
  }

  /// The first offset in `start..<end` holding `byte`, or nil when there is none (or the range
  /// is outside the file: `end` is clamped to `count`). Scans what the window already holds
  /// before reading more, so repeated searches over one region cost one `pread` per window.
  func firstIndex(of byte: UInt8, from start: Int, to end: Int) -> Int? {
    guard start >= 0 else { return nil }
    let limit = min(end, count)
    var position = start
    while position < limit {
      guard let (index, held) = available(at: position) else { return nil }
      let length = min(held, limit - position)
      let found: Int? = window.withUnsafeBytes { raw in
        guard let base = raw.baseAddress else { return nil }
        guard let hit = memchr(base + index, Int32(byte), length) else { return nil }
        return UnsafeRawPointer(hit) - (base + index)
      }
      if let found { return position + found }
      position += length
    }
    return nil
  }

  /// The index in `window` of `offset` and how many bytes the window holds from there (at
  /// least 1), reading a new window only when `offset` is outside the current one; nil when
  /// `offset` is outside the file or the read fails.
  private func available(at offset: Int) -> (index: Int, count: Int)? {
    guard stop == nil else { return nil }
    let relative = offset - windowStart
    if offset >= 0, relative >= 0, relative < window.count { return (relative, window.count - relative) }
    guard let index = locate(offset, 1) else { return nil }
    return (index, window.count - index)
  }

  /// The offset of the next MPEG start code prefix 00 00 01 at or after `start` and wholly
  /// before `end`, or nil.
  func nextStartCode(from start: Int, to end: Int) -> Int? {
    guard start >= 0, start <= count else { return nil }
    var search = start + 2
    while search < end {
      guard let one = firstIndex(of: 0x01, from: search, to: end) else { return nil }
      if u8(one - 1) == 0, u8(one - 2) == 0 { return one - 2 }
      search = one + 1
    }
    return nil
  }
}
