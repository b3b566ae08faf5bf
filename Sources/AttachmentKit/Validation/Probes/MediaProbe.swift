/// The structural probes' entry points: `identify` on the first bytes of a stream, `inspect` on
/// the complete file. Pure functions over bytes; nothing here traps or loops unboundedly on
/// hostile input.
enum MediaProbe {
  /// The most bytes `identify` looks at; a longer prefix is cut to this.
  static let maxPrefix = 1 << 20

  /// Step 1, on a stream: the first bytes (up to 64 KiB, may be shorter than the file).
  /// Returns the format the structure shows, or nil when no accepted format matches (or the
  /// prefix is too short to tell, or an ID3v2 tag runs past it: see `identify(file:)`).
  static func identify(prefix: UnsafeRawBufferPointer) -> ProbeReport? {
    identify(bytes: Array(prefix.prefix(maxPrefix)))
  }

  /// `identify(prefix:)` over an array.
  static func identify(bytes: [UInt8]) -> ProbeReport? {
    identify(ByteReader(bytes: bytes.count > maxPrefix ? Array(bytes.prefix(maxPrefix)) : bytes))
  }

  /// Step 1 on a complete file: identifies from its first 64 KiB, or, when an ID3v2 tag fills
  /// them, from the 64 KiB after the tag (MP3 / ADTS only). Nil when no accepted format matches.
  static func identify(file: FileBytes) -> ProbeReport? {
    let reader = ByteReader(file)
    let window = min(reader.count, 65_536)
    guard let head = reader.bytes(at: 0, count: window) else { return nil }
    if let report = identify(bytes: head) { return report }
    let tag = head.withUnsafeBytes { id3v2Length($0) }
    guard tag > 0, tag < reader.count else { return nil }
    let length = min(reader.count - tag, 65_536)
    guard let after = reader.bytes(at: tag, count: length) else { return nil }
    let rest = ByteReader(bytes: after)
    return MP3Probe.identify(rest) ?? ADTSProbe.identify(rest)
  }

  /// Length of an ID3v2 tag at the start (10-byte header, synchsafe size, + footer flag), or 0
  /// when the bytes do not start with a valid ID3v2 header.
  static func id3v2Length(_ prefix: UnsafeRawBufferPointer) -> Int {
    AudioTags.id3v2Length(ByteReader(bytes: Array(prefix.prefix(10))), at: 0)
  }

  /// Step 2, on the complete file: checks the whole structure and fills in dimensions and
  /// duration. Fails `.truncated` when the structure runs past the end of the file,
  /// `.malformed` when it is wrong (including when the file is not `format` at all), and
  /// `.interrupted` when the walk went over its work budget (see ``ByteReader``) or `signal`
  /// said stop (deadline, cancellation), whatever the walk concluded.
  static func inspect(
    file: FileBytes, as format: ProbedFormat, signal: StopSignal? = nil
  ) -> Result<ProbeReport, ProbeProblem> {
    let reader = ByteReader(file, signal: signal)
    let result = format.row.inspect(reader)
    if let stop = reader.stop { return .failure(.interrupted(stop)) }
    return result
  }

  /// Identify then inspect a complete file: nil when no accepted format matches, else the
  /// whole-file result for the identified format.
  static func probe(file: FileBytes) -> Result<ProbeReport, ProbeProblem>? {
    guard let first = identify(file: file) else { return nil }
    return inspect(file: file, as: first.format)
  }

  /// Tries each format's probe on `reader` (a prefix), in the table's order (see
  /// ``ProbedFormat``).
  private static func identify(_ reader: ByteReader) -> ProbeReport? {
    for format in ProbedFormat.allCases {
      if let report = format.row.identify(reader) { return report }
    }
    return nil
  }
}
