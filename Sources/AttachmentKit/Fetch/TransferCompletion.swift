import Glibc
import PosixLock

/// The one-time answer to a transfer's caller.
///
/// Three parties may try to answer: the engine (the transfer finished), the deadline watchdog
/// and the cancellation handler. The first wins; later answers are ignored. Whoever answers
/// with a failure removes the body's temporary file at once, so a failed or abandoned download
/// leaves nothing on disk even while the engine is still tearing the transfer down.
final class TransferCompletion: Sendable {
  private enum State {
    case waiting
    case parked(CheckedContinuation<Result<Download, AttachmentError>, Never>)
    case answered(Result<Download, AttachmentError>)
    case delivered
  }

  private let state = Locked<State>(.waiting)
  private let temporaryFile: String?

  /// Makes a completion for a transfer whose body goes to `temporaryFile` (`nil` when the
  /// caller made the file and removes it).
  init(temporaryFile: String?) {
    self.temporaryFile = temporaryFile
  }

  /// Parks the caller until an answer arrives (or hands it over at once if one already did).
  func park(_ continuation: CheckedContinuation<Result<Download, AttachmentError>, Never>) {
    let ready: Result<Download, AttachmentError>? = state.withLock { state in
      switch state {
      case .answered(let result):
        state = .delivered
        return result
      case .waiting:
        state = .parked(continuation)
        return nil
      case .parked, .delivered:
        return nil
      }
    }
    if let ready { continuation.resume(returning: ready) }
  }

  /// Answers the caller unless someone already did. Returns whether this answer won.
  @discardableResult
  func answer(_ result: Result<Download, AttachmentError>) -> Bool {
    let (won, continuation) = state.withLock {
      state -> (Bool, CheckedContinuation<Result<Download, AttachmentError>, Never>?) in
      switch state {
      case .waiting:
        state = .answered(result)
        return (true, nil)
      case .parked(let continuation):
        state = .delivered
        return (true, continuation)
      case .answered, .delivered:
        return (false, nil)
      }
    }
    if won, case .failure = result, let temporaryFile {
      unlink(temporaryFile)
    }
    continuation?.resume(returning: result)
    return won
  }

  /// Whether an answer has been given.
  var isAnswered: Bool {
    state.withLock { state in
      switch state {
      case .waiting, .parked: false
      case .answered, .delivered: true
      }
    }
  }
}
