import CWorkerIO

/// What libvips (through GLib) and FFmpeg log in a rescue worker: kept in a bounded list
/// instead of written to standard error (a worker's is `/dev/null`), taken after each job and
/// returned with its answer, so that the messages reach the caller as the rescue's warnings
/// (``Rescue/warnings``, then ``Validation/warnings``) or in its failure's message.
enum LibraryLog {
  /// Routes `library`'s messages into the list, loading it first if needed; once per process
  /// and library (later calls do nothing).
  static func capture(_ library: WorkerLibrary) {
    switch library {
    case .libvips:
      if let setter = Libvips.shared?.setLogWriter { _ = ak_library_log_capture_glib(setter) }
    case .ffmpeg:
      if let av = Libav.shared { _ = ak_library_log_capture_av(av.av_log_set_callback) }
    case .bare: break
    }
  }

  /// The messages kept since the last call, each `library: text` once (at most 8), with
  /// control characters escaped, then `… and N more` when more were logged; empties the list.
  static func take() -> [String] {
    var buffer = [CChar](repeating: 0, count: 4096)
    let dropped = ak_library_log_take(&buffer, buffer.count)
    let text = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    var messages = text.split(separator: "\n").map { Redaction.escapeControlCharacters(String($0)) }
    if dropped > 0 { messages.append("… and \(dropped) more library message\(dropped == 1 ? "" : "s")") }
    return messages
  }
}
