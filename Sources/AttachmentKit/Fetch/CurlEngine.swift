import CCurl
import Dispatch
import Glibc
import PosixLock

/// One libcurl multi handle driven by one dedicated thread.
///
/// Every transfer shares the multi handle's connection cache, so connections are reused
/// (keep-alive, and HTTP/2 multiplexing when the server offers it). Other threads talk to the
/// engine only through its command queue and `curl_multi_wakeup`. A transfer's easy handle is
/// made and configured by the caller before it is submitted; from submission on, it and the
/// multi handle are touched on the engine thread alone.
final class CurlEngine: @unchecked Sendable {
  private enum Command {
    case add(Transfer)
    case cancel(Transfer, AttachmentError)
    case stop
  }

  private let multi: UnsafeMutableRawPointer
  /// Commands for the engine thread, and whether the multi handle is gone (after which
  /// nothing may touch it, not even `curl_multi_wakeup`).
  private let commands = Locked<(queue: [Command], closed: Bool)>(([], false))
  /// Live (submitted) transfers by easy handle address; read and written on the engine thread.
  private var transfers: [UnsafeMutableRawPointer: Transfer] = [:]

  /// How many idle connections the engine keeps for reuse, at least (across hosts).
  static let idleConnections = 64

  /// Starts the engine's thread. Returns `nil` when libcurl cannot make a multi handle or the
  /// thread cannot start.
  init?(configuration: DownloaderConfiguration) {
    guard Libcurl.shared != nil, LibcurlGlobal.initializeOnce(), let multi = curl_multi_init() else {
      return nil
    }
    self.multi = multi
    _ = ak_multi_setopt_long(
      multi, CURLMOPT_MAX_HOST_CONNECTIONS, configuration.maximumConnectionsPerHost)
    _ = ak_multi_setopt_long(multi, CURLMOPT_PIPELINING, Int(CURLPIPE_MULTIPLEX))
    // Without a size of its own, libcurl's connection cache holds 4 × the easy handles added
    // at the moment a transfer ends: one handle per transfer, so when a burst thins out the
    // cache shrinks and closes idle connections the next transfers then open again.
    _ = ak_multi_setopt_long(
      multi, CURLMOPT_MAXCONNECTS, max(Self.idleConnections, configuration.maximumConnectionsPerHost))

    var thread = pthread_t()
    let context = Unmanaged.passRetained(self).toOpaque()
    let started = pthread_create(
      &thread, nil,
      { context in
        guard let context else { return nil }
        let engine = Unmanaged<CurlEngine>.fromOpaque(context).takeRetainedValue()
        engine.run()
        return nil
      }, context)
    guard started == 0 else {
      Unmanaged<CurlEngine>.fromOpaque(context).release()
      curl_multi_cleanup(multi)
      return nil
    }
    pthread_detach(thread)
  }

  /// Hands a transfer (whose handle is already made) to the engine thread.
  func submit(_ transfer: Transfer) { send(.add(transfer)) }

  /// Asks the engine to stop a transfer and answer it with `error` (if nobody answered yet).
  func cancel(_ transfer: Transfer, with error: AttachmentError) { send(.cancel(transfer, error)) }

  /// Stops the thread: live transfers are answered `cancelled` and the multi handle is freed.
  func stop() { send(.stop) }

  private func send(_ command: Command) {
    commands.withLock { state in
      guard !state.closed else { return }
      state.queue.append(command)
      curl_multi_wakeup(multi)
    }
  }

  // MARK: - The engine thread

  private func run() {
    var running: Int32 = 0
    while true {
      if let unrun = runCommands() {
        shutDown(unrun: unrun)
        return
      }
      curl_multi_perform(multi, &running)
      collectFinished()
      curl_multi_poll(multi, nil, 0, 1000, nil)
    }
  }

  /// Runs the commands sent since the last turn, up to a `stop`; returns the commands after
  /// the `stop` (for ``shutDown(unrun:)`` to answer), or `nil` when there was none. The
  /// commands (and the transfers they hold) are released on return, not kept through the poll.
  private func runCommands() -> ArraySlice<Command>? {
    let pending = commands.withLock { state in
      defer { state.queue.removeAll(keepingCapacity: true) }
      return state.queue
    }
    for (index, command) in pending.enumerated() {
      switch command {
      case .add(let transfer): add(transfer)
      case .cancel(let transfer, let error): finish(transfer, with: .failure(error))
      case .stop: return pending[(index + 1)...]
      }
    }
    return nil
  }

  private func add(_ transfer: Transfer) {
    guard let easy = transfer.easy else { return }
    if transfer.completion.isAnswered {  // cancelled or timed out before it started
      transfer.releaseResources()
      return
    }
    let code = curl_multi_add_handle(multi, easy)
    guard code == CURLM_OK else {
      let name = curlMultiErrorText(code)
      transfer.completion.answer(
        .failure(AttachmentError(.networkError, "libcurl would not start the transfer: \(name).")))
      transfer.releaseResources()
      return
    }
    transfers[easy] = transfer
  }

  private func collectFinished() {
    var left: Int32 = 0
    while let message = curl_multi_info_read(multi, &left) {
      guard message.pointee.msg == CURLMSG_DONE, let easy = message.pointee.easy_handle,
        let transfer = transfers[easy]
      else { continue }
      let code = message.pointee.data.result
      let now = ContinuousClock.now
      let outcome = transfer.outcome(code: code, now: now)
      if transfer.redirectHop != nil, !transfer.completion.isAnswered {
        hop(transfer, now: now)
      } else if case .failure = outcome, !transfer.completion.isAnswered,
        case .retry(let wait, let resume) = transfer.retryDecision(code: code, now: now)
      {
        retry(transfer, after: wait, resuming: resume, now: now)
      } else {
        finish(transfer, with: outcome)
      }
    }
  }

  /// Follows a redirect the transfer stopped at because it needs other origin headers: the
  /// same transfer, body file and deadline, a new request to where the redirect led.
  private func hop(_ transfer: Transfer, now: ContinuousClock.Instant) {
    if let easy = transfer.easy, transfers.removeValue(forKey: easy) != nil {
      curl_multi_remove_handle(multi, easy)
    }
    if let error = transfer.prepareRedirectHop(now: now) {
      finish(transfer, with: .failure(error))
      return
    }
    add(transfer)
  }

  /// Performs a ``RetryPolicy`` decision: detaches the transfer, makes its handle ready for the
  /// next attempt and adds it again, at once or after `wait` (a deadline timer then submits
  /// it; the transfer's watchdog and cancellation still answer meanwhile, and an answered
  /// transfer is not added again).
  private func retry(
    _ transfer: Transfer, after wait: Duration, resuming resume: RetryPolicy.Resume?,
    now: ContinuousClock.Instant
  ) {
    if let easy = transfer.easy, transfers.removeValue(forKey: easy) != nil {
      curl_multi_remove_handle(multi, easy)
    }
    if let error = transfer.prepareRetry(resume: resume, now: now + wait) {
      finish(transfer, with: .failure(error))
      return
    }
    guard wait > .zero else {
      add(transfer)
      return
    }
    let nanoseconds = Int(clamping: wait.wholeNanoseconds)
    BackgroundWork.deadlines.asyncAfter(deadline: .now() + .nanoseconds(nanoseconds)) { [self] in
      submit(transfer)
    }
  }

  /// Detaches a transfer from the multi handle, answers its caller and frees its resources.
  private func finish(_ transfer: Transfer, with result: Result<Download, AttachmentError>) {
    if let easy = transfer.easy, transfers.removeValue(forKey: easy) != nil {
      curl_multi_remove_handle(multi, easy)
    }
    let won = transfer.completion.answer(result)
    if !won, case .success(let download) = result, let file = download.file {
      unlink(file)  // the caller already had its answer (deadline or cancel): drop the body
    }
    transfer.releaseResources()
  }

  /// Answers every live transfer, and every one still to be added (`unrun`, or sent after the
  /// `stop`), `cancelled`, and frees the multi handle.
  private func shutDown(unrun: ArraySlice<Command>) {
    let late = commands.withLock { state in
      state.closed = true
      return state.queue
    }
    var stranded = Array(transfers.values)
    for case .add(let transfer) in unrun + late { stranded.append(transfer) }
    for transfer in stranded {
      finish(transfer, with: .failure(AttachmentError(.cancelled, "The downloader was shut down.")))
    }
    curl_multi_cleanup(multi)
  }
}

/// libcurl's process-wide set-up, done once before the first handle.
enum LibcurlGlobal {
  private static let initialized: Bool = {
    signal(SIGPIPE, SIG_IGN)
    return curl_global_init(Int(CURL_GLOBAL_ALL)) == CURLE_OK
  }()

  /// Runs `curl_global_init` and ignores `SIGPIPE`, once per process; whether it succeeded.
  static func initializeOnce() -> Bool { initialized }
}
