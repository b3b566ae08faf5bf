// libFuzzer entry for the structural probes and the sniffing path. Not a SwiftPM target:
// scripts/fuzz.sh compiles it together with the AttachmentKit sources (so it reaches their
// internal API) with `swiftc -sanitize=fuzzer,address`.

/// Feeds one input through everything that reads untrusted media bytes: identification,
/// the complete-file probe for every format, classification, and the streaming sniffer in
/// uneven chunks. Any crash, trap or sanitizer report is a finding.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzMedia(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
  let bytes = UnsafeRawBufferPointer(start: data, count: size)
  let array = Array(bytes)

  let tag = MediaProbe.id3v2Length(bytes)
  let window = UnsafeRawBufferPointer(rebasing: bytes[min(tag, size)...].prefix(SniffWindow.maximumBytes))
  let identified = MediaProbe.identify(prefix: window)
  let file = FileBytes(bytes: array)
  for format in ProbedFormat.allCases {
    _ = MediaProbe.inspect(file: file, as: format)
  }
  if let identified {
    _ = Classifier.category(forPrefix: identified, detected: nil)
    if case .success(let report) = MediaProbe.inspect(file: file, as: identified.format) {
      _ = Classifier.mediaType(for: report, detected: nil)
    }
  }

  // The streaming path, in chunks of varying size, as the engine hands them over.
  let sniffer = StreamingSniffer()
  var headers = ResponseHeaders()
  headers.append(name: "Content-Length", value: String(size))
  _ = sniffer.inspect(head: ResponseHead(status: 200, headers: headers))
  var offset = 0
  var step = 1
  while offset < size {
    let end = min(size, offset + step)
    if case .reject = sniffer.inspect(
      body: UnsafeRawBufferPointer(rebasing: bytes[offset..<end]), at: Int64(offset))
    {
      break
    }
    offset = end
    step = step * 2 + 7
  }

  // Records, dates and header lines read from disk or the network.
  let text = String(decoding: array, as: UTF8.self)
  _ = CacheRecord(decoding: text[...])
  _ = HTTPDate.parse(text)
  _ = HeaderLine(bytes)
  _ = URLKey(text)
  return 0
}
