/// The structural probes' entry points: `identify` on the first bytes of a stream, `inspect` on
/// the complete file. Pure functions over bytes; nothing here traps or loops unboundedly on
/// hostile input.
enum MediaProbe {
  /// The most bytes `identify` looks at; a longer prefix is cut to this.
  static let maxPrefix = 1 << 20

  /// Step 1, on a stream: the first bytes (up to 64 KiB, may be shorter than the file).
  /// Returns the format the structure shows, or nil when no accepted format matches (or the
  /// prefix is too short to tell, or an ID3v2 tag runs past it).
  static func identify(prefix: UnsafeRawBufferPointer) -> ProbeReport? {
    identify(bytes: Array(prefix.prefix(maxPrefix)))
  }

  /// `identify(prefix:)` over an array.
  static func identify(bytes: [UInt8]) -> ProbeReport? {
    identify(ByteReader(bytes: bytes.count > maxPrefix ? Array(bytes.prefix(maxPrefix)) : bytes))
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

  /// Tries each format's probe on `reader` (a prefix), in the table's order (see
  /// ``ProbedFormat``).
  private static func identify(_ reader: ByteReader) -> ProbeReport? {
    for format in ProbedFormat.allCases {
      if let report = format.row.identify(reader) { return report }
    }
    return nil
  }
}
