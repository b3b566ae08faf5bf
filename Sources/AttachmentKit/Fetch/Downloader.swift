import Dispatch
import Glibc

/// Downloads URLs to files under an absolute deadline, in constant memory, over libcurl.
///
/// One downloader owns one engine thread and one connection cache; share it for the life of
/// the process so connections are reused. Every failure is an ``AttachmentError`` and comes
/// within the deadline, even when libcurl itself cannot stop in time.
///
/// ```swift
/// let downloader = Downloader()
/// let download = try await downloader.download(
///   DownloadRequest(url: "https://example.com/a.jpg"), timeout: .seconds(25))
/// ```
public final class Downloader: Sendable {
  /// The limits every transfer of this downloader follows.
  public let configuration: DownloaderConfiguration
  private let engine: CurlEngine?

  /// Starts a downloader (and its engine thread) with a configuration.
  public init(configuration: DownloaderConfiguration = DownloaderConfiguration()) {
    self.configuration = configuration
    self.engine = CurlEngine(configuration: configuration)
  }

  deinit {
    engine?.stop()
  }

  /// Downloads `request` and returns once the body is on disk, or throws.
  ///
  /// - Parameters:
  ///   - request: what to fetch and where the body's temporary file goes.
  ///   - deadline: the absolute instant by which the answer comes, redirects and connection
  ///     set-up included. The caller is answered at the deadline even if libcurl is stuck
  ///     (in a hung resolver, say); the transfer is torn down afterwards. It covers every
  ///     attempt: a transient failure is retried (``DownloaderConfiguration/retries``) only when
  ///     the retry, and any `Retry-After` wait before it, starts before this instant.
  /// - Returns: the ``Download``; its ``Download/file`` now belongs to the caller.
  /// - Throws: ``AttachmentError`` with `invalid_url`, `unsupported_scheme`, `dns_failed`,
  ///   `connect_failed`, `tls_failed`, `http_status`, `too_many_redirects`,
  ///   `deadline_exceeded`, `too_slow`, `too_large`, `headers_too_large`, `truncated`, `empty`,
  ///   `io_error`, `cancelled` (task cancellation), `network_error`, `blocked_address`,
  ///   `origin_not_allowed` (the URL or a redirect outside
  ///   ``DownloaderConfiguration/allowedOrigins``),
  ///   `invalid_configuration` (a proxy the caller has not accepted; see
  ///   ``DownloaderConfiguration/Proxy``), or whatever the request's
  ///   inspector rejected with. On any failure no file is left behind.
  public func download(
    _ request: DownloadRequest, deadline: ContinuousClock.Instant
  ) async throws(AttachmentError) -> Download {
    let now = ContinuousClock.now
    let engine: CurlEngine
    switch start(request, deadline: deadline, now: now) {
    case .success(let started): engine = started
    case .failure(let problem):
      // Refused before it starts: the body file's descriptor it took over is closed here.
      if let descriptor = request.bodyFile?.descriptor { close(descriptor) }
      throw problem
    }
    let (path, descriptor): (String, Int32)
    if let bodyFile = request.bodyFile {
      (path, descriptor) = bodyFile
    } else {
      (path, descriptor) = try TemporaryFile.create(in: request.directory)
    }
    let transfer = Transfer(
      request: request, configuration: configuration, deadline: deadline,
      temporaryFile: path, fileDescriptor: descriptor, ownsFile: request.bodyFile == nil)
    if let error = transfer.makeHandle(now: now) {
      transfer.completion.answer(.failure(error))
      transfer.releaseResources()
      throw error
    }

    // A cancelled work item stays queued, with what it holds, until its time comes: holding
    // the transfer weakly lets the transfer (and the body-digest descriptor it owns) go when
    // the download returns, not at the deadline.
    let watchdog = DispatchWorkItem { [engine, weak transfer] in
      guard let transfer else { return }
      var error = AttachmentError(
        .deadlineExceeded, "The deadline passed before the download finished.")
      if let received = transfer.request.receivedBytes?.value, received > 0 { error.bytesReceived = received }
      if transfer.completion.answer(.failure(error)) {
        engine.cancel(transfer, with: error)
      }
    }
    BackgroundWork.deadlines.asyncAfter(
      deadline: .now() + Self.dispatchInterval(deadline - .now), execute: watchdog)
    defer { watchdog.cancel() }

    let result = await withTaskCancellationHandler {
      await withCheckedContinuation { continuation in
        transfer.completion.park(continuation)
        engine.submit(transfer)
      }
    } onCancel: {
      var error = AttachmentError.cancelledError()
      if let received = request.receivedBytes?.value, received > 0 { error.bytesReceived = received }
      if transfer.completion.answer(.failure(error)) {
        engine.cancel(transfer, with: error)
      }
    }
    return try result.get()
  }

  /// The engine to run `request` on, or why it must not start: its URL, the proxy settings,
  /// cancellation, a passed deadline, or no libcurl.
  private func start(
    _ request: DownloadRequest, deadline: ContinuousClock.Instant, now: ContinuousClock.Instant
  ) -> Result<CurlEngine, AttachmentError> {
    if request.checkedURL?.text != request.url, let problem = URLCheck.problem(with: request.url) {
      return .failure(problem)
    }
    if !configuration.allowedOrigins.allows(request.url) {
      return .failure(configuration.allowedOrigins.refusal(request.url, redirect: false))
    }
    if let problem = ProxyPolicy.configurationProblem(configuration) { return .failure(problem) }
    if ProxyPolicy.checksHosts(configuration), let refusal = ProxyPolicy.refusal(url: request.url) {
      return .failure(refusal)
    }
    if Task.isCancelled { return .failure(AttachmentError.cancelledError()) }
    guard deadline > now else {
      return .failure(AttachmentError(.deadlineExceeded, "The deadline passed before the download started."))
    }
    guard let engine else {
      return .failure(
        AttachmentError(
          .networkError,
          "The download engine could not start: libcurl.so.4 could not be loaded (apt: libcurl4)."))
    }
    return .success(engine)
  }

  /// Downloads `request` within `timeout` from now: a convenience for
  /// ``download(_:deadline:)``, with the same results and errors.
  public func download(
    _ request: DownloadRequest, timeout: Duration
  ) async throws(AttachmentError) -> Download {
    try await download(request, deadline: .now + timeout)
  }

  private static func dispatchInterval(_ duration: Duration) -> DispatchTimeInterval {
    let nanoseconds = duration.wholeNanoseconds
    return .nanoseconds(Int(clamping: max(0, nanoseconds)))
  }
}
