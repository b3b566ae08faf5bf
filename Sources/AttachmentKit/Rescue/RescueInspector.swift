import PosixLock

/// The streaming sniffer, for a caller with rescuers: a refusal one of them can undo (a
/// convertible type, an image over its byte limit) does not stop the transfer; it is kept as
/// ``deferredRefusal`` and the body streams on, up to that rescuer's
/// ``Rescuer/maximumSourceBytes``. Every other refusal stops the transfer as the sniffer alone
/// would.
final class RescueInspector: ResponseInspector {
  private struct State {
    var declared: Int64?
    /// The refusal a rescuer will undo, and that rescuer's source limit in bytes.
    var deferred: (refusal: Refusal, sourceLimit: Int64)?
  }

  /// The sniffer whose verdicts this follows.
  let sniffer: StreamingSniffer
  private let rescuers: [any Rescuer]
  private let state = Locked(State())

  /// Follows `sniffer`, letting sources that one of `rescuers` may rescue grow to its limit.
  init(sniffer: StreamingSniffer, rescuers: [any Rescuer]) {
    self.sniffer = sniffer
    self.rescuers = rescuers
  }

  /// The refusal the sniffer gave a body a rescue may turn into an attachment, or `nil`.
  var deferredRefusal: Refusal? { state.withLock { $0.deferred?.refusal } }

  /// Lets a declared length the sniffer refuses through while it is within the largest source
  /// limit: the sniffer (which keeps the length) refuses it again once the type shows that no
  /// rescuer takes it, and the chosen rescuer's own limit is checked as bytes arrive.
  func inspect(head: ResponseHead) -> InspectorVerdict {
    let declared = head.headers.contentLength
    state.withLock { $0.declared = declared }
    let verdict = sniffer.inspect(head: head)
    if case .reject = verdict, let declared, declared <= rescuers.largestSourceBytes { return .more }
    return verdict
  }

  /// Forgets the body seen so far, and so does the sniffer: a retried attempt's new body is
  /// judged from its first byte.
  func restart() {
    state.withLock { $0 = State() }
    sniffer.restart()
  }

  /// Sniffs like the sniffer; after a rescuable refusal, only counts bytes against the source
  /// limit of the rescuer that will take it.
  func inspect(body chunk: UnsafeRawBufferPointer, at offset: Int64) -> InspectorVerdict {
    let end = offset + Int64(chunk.count)
    let (deferred, declared) = state.withLock { ($0.deferred, $0.declared) }
    if let deferred { return Self.checkSource(end: max(end, declared ?? 0), limit: deferred.sourceLimit) }
    let verdict = sniffer.inspect(body: chunk, at: offset)
    guard case .reject(let error) = verdict else { return verdict }
    guard let (rescuer, refusal) = taker(of: Refusal(error, sniffed: sniffer.verdict, bytes: end)) else {
      return verdict
    }
    let limit = rescuer.maximumSourceBytes
    if case .reject(let tooLarge) = Self.checkSource(end: max(end, declared ?? 0), limit: limit) {
      return .reject(tooLarge)
    }
    state.withLock { $0.deferred = (refusal, limit) }
    return .more
  }

  /// The first rescuer that undoes `refusal`, with the refusal it undoes. A refusal of unknown
  /// category (an ISO BMFF body over every limit before its tracks show whether it is video or
  /// audio) is offered as each category its format may be.
  private func taker(of refusal: Refusal) -> (any Rescuer, Refusal)? {
    var offers = [refusal]
    if refusal.category == nil {
      offers += (sniffer.verdict?.format.categories ?? []).map { category in
        var offer = refusal
        offer.category = category
        return offer
      }
    }
    for offer in offers {
      if let rescuer = rescuers.first(where: { $0.canRescue(offer) }) { return (rescuer, offer) }
    }
    return nil
  }

  private static func checkSource(end: Int64, limit: Int64) -> InspectorVerdict {
    guard end > limit else { return .more }
    return .reject(
      AttachmentError(
        .tooLarge, "The source reaches \(end) bytes, over the rescue's source limit of \(limit)."))
  }
}
