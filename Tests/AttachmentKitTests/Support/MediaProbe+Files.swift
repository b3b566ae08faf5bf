@testable import AttachmentKit

/// Whole-file entry points the tests use to look at samples; the product identifies from the
/// streamed window instead (``StreamingSniffer``, ``Validator``), so these live here.
extension MediaProbe {
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

  /// Identify then inspect a complete file: nil when no accepted format matches, else the
  /// whole-file result for the identified format.
  static func probe(file: FileBytes) -> Result<ProbeReport, ProbeProblem>? {
    guard let first = identify(file: file) else { return nil }
    return inspect(file: file, as: first.format)
  }
}
