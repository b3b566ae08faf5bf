import PosixLock

/// The streaming sniffer, for a caller with rescue on: a refusal a rescue can undo (a
/// convertible type, an image over its byte limit) does not stop the transfer; it is kept as
/// ``deferredRefusal`` and the body streams on, up to
/// ``RescueConfiguration/maximumSourceBytes``. Every other refusal stops the transfer as the
/// sniffer alone would.
final class RescueInspector: ResponseInspector {
  private struct State {
    var declared: Int64?
    var deferred: AttachmentError?
  }

  /// The sniffer whose verdicts this follows.
  let sniffer: StreamingSniffer
  private let maximumSourceBytes: Int64
  private let state = Locked(State())

  /// Follows `sniffer`, letting rescuable sources grow to `maximumSourceBytes`.
  init(sniffer: StreamingSniffer, maximumSourceBytes: Int64) {
    self.sniffer = sniffer
    self.maximumSourceBytes = maximumSourceBytes
  }

  /// The refusal the sniffer gave a body a rescue may turn into an attachment, or `nil`.
  var deferredRefusal: AttachmentError? { state.withLock { $0.deferred } }

  /// Lets a declared length the sniffer refuses through while it is within the source limit:
  /// the sniffer (which keeps the length) refuses it again once the type shows it cannot be
  /// rescued.
  func inspect(head: ResponseHead) -> InspectorVerdict {
    let declared = head.headers.contentLength
    state.withLock { $0.declared = declared }
    let verdict = sniffer.inspect(head: head)
    if case .reject = verdict, let declared, declared <= maximumSourceBytes { return .more }
    return verdict
  }

  /// Sniffs like the sniffer; after a rescuable refusal, only counts bytes against the source
  /// limit.
  func inspect(body chunk: UnsafeRawBufferPointer, at offset: Int64) -> InspectorVerdict {
    let end = offset + Int64(chunk.count)
    let (deferred, declared) = state.withLock { ($0.deferred, $0.declared) }
    if deferred != nil { return checkSource(end: max(end, declared ?? 0)) }
    let verdict = sniffer.inspect(body: chunk, at: offset)
    guard case .reject(let error) = verdict,
      ImageRescuer.canRescue(error, isImage: Self.isImage(sniffer.verdict?.format))
    else { return verdict }
    if case .reject(let tooLarge) = checkSource(end: max(end, declared ?? 0)) { return .reject(tooLarge) }
    state.withLock { $0.deferred = error }
    return .more
  }

  private func checkSource(end: Int64) -> InspectorVerdict {
    guard end > maximumSourceBytes else { return .more }
    return .reject(
      AttachmentError(
        .tooLarge, "The image reaches \(end) bytes, over the rescue's source limit of \(maximumSourceBytes).")
    )
  }

  /// Whether the sniffed format is an accepted image format.
  static func isImage(_ format: ProbedFormat?) -> Bool {
    switch format {
    case .jpeg, .png, .gif, .tiff: true
    default: false
    }
  }
}
