import CAV

/// Stops FFmpeg at a rescue's deadline: its blocking reads and long operations poll
/// ``callback`` (FFmpeg's `interrupt_callback`), and the rescue's own loops call ``check()``
/// between packets. Lives as long as the contexts that point at it.
final class MediaInterrupt {
  /// When the rescue must be over; `nil`: never.
  let deadline: ContinuousClock.Instant?

  /// Makes an interrupt for `deadline`.
  init(deadline: ContinuousClock.Instant?) {
    self.deadline = deadline
  }

  /// Whether the deadline has passed.
  var hasFired: Bool {
    guard let deadline else { return false }
    return ContinuousClock.now >= deadline
  }

  /// `deadline_exceeded` once the deadline has passed.
  func check() throws(AttachmentError) {
    if hasFired { throw Self.deadlineError }
  }

  /// The error a rescue stopped at its deadline throws.
  static let deadlineError = AttachmentError(
    .deadlineExceeded, "The deadline passed while the media was rescued.")

  /// FFmpeg's callback: 1 (stop) once the deadline has passed. It holds an unretained pointer
  /// to this object: keep the object alive while any context holds the callback.
  var callback: AVIOInterruptCB {
    AVIOInterruptCB(
      callback: { opaque in
        guard let opaque else { return 0 }
        return Unmanaged<MediaInterrupt>.fromOpaque(opaque).takeUnretainedValue().hasFired ? 1 : 0
      }, opaque: Unmanaged.passUnretained(self).toOpaque())
  }
}
