// libFuzzer entry focused on the two walks whose work can be amplified by pointers inside the
// file: TIFF (IFD chains, strip and tile tables) and ISO BMFF (nested boxes, sample tables,
// sample entries, fragments). Not a SwiftPM target: scripts/fuzz.sh compiles it with the
// AttachmentKit sources (so it reaches their internal API) with `swiftc -sanitize=fuzzer,address`,
// seeds it with the TIFF, MP4, MOV and M4A samples, and runs it with -timeout, so an input
// whose walk takes more than a moment is a finding, like a crash.

/// Walks one input as TIFF and as ISO BMFF, then judges what a walk found the way the
/// validator does (type, then codecs). Any crash, trap, sanitizer report or slow input is a
/// finding.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzContainers(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
  let file = FileBytes(bytes: Array(UnsafeRawBufferPointer(start: data, count: size)))
  for format in [ProbedFormat.tiff, .isoBMFF] {
    guard case .success(let report) = MediaProbe.inspect(file: file, as: format) else { continue }
    if case .success(let type) = Classifier.mediaType(for: report, detected: nil) {
      _ = CodecCheck.judge(report.streams, type: type)
    }
  }
  return 0
}
