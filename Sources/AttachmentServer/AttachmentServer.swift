import AttachmentKit
import CMicroHTTPD
import Glibc
import PosixLock

/// The push-media proxy: answers signed URLs with files the pipeline fetched, validated and
/// cached once, over libmicrohttpd (an epoll thread pool, sendfile bodies).
///
/// A cache hit is answered on the event-loop thread without any task; a miss suspends the
/// connection, runs the pipeline on a task (concurrent requests for one URL share its fetch),
/// and resumes it with the answer. See `docs/deploy.md` for the routes and headers.
///
/// ```swift
/// let server = AttachmentServer(
///   configuration: ServerConfiguration(port: 8080), pipeline: pipeline, signer: signer)
/// try server.start()
/// // … on SIGTERM:
/// server.shutdown()
/// ```
public final class AttachmentServer: Sendable {
  /// The server's settings.
  public let configuration: ServerConfiguration
  let pipeline: AttachmentPipeline
  /// The keys paths are verified with; ``replaceSigner(_:)`` swaps them (SIGHUP's reload).
  private let signerState: Locked<URLSigner>
  /// The keys paths are verified with now.
  var signer: URLSigner { signerState.withLock { $0 } }
  let infoRecord: @Sendable (String, Result<Attachment, AttachmentError>) -> JSON
  let metrics = Metrics()
  let admission: FetchAdmission
  let hitMemo = HitMemo()
  /// Signed targets that verified lately (``TargetMemo``).
  let targets = TargetMemo()
  let watch: ConnectionWatch
  let refusalMemo = RefusalMemo()
  let cacheGauges = CacheGauges()
  private let daemon = Locked<DaemonHandle?>(nil)
  private let draining = Locked(false)
  /// Connections suspended while a task prepares their answer.
  let suspended = Locked(0)

  /// Verifies paths with `signer` from now on (requests already verified are not judged again):
  /// the key file's reload on SIGHUP, without a restart.
  public func replaceSigner(_ signer: URLSigner) {
    signerState.withLock { $0 = signer }
    targets.forget()
  }

  /// A server that answers with `pipeline`'s attachments, verifying paths with `signer`.
  /// `infoRecord` makes the JSON of `GET /v1/info/…` from a URL (redacted) and its outcome (the command
  /// line passes its `fetch --json` record); by default, a small record of the attachment.
  public init(
    configuration: ServerConfiguration, pipeline: AttachmentPipeline, signer: URLSigner,
    infoRecord: (@Sendable (String, Result<Attachment, AttachmentError>) -> JSON)? = nil
  ) {
    self.configuration = configuration
    self.pipeline = pipeline
    signerState = Locked(signer)
    self.infoRecord = infoRecord ?? Self.defaultInfoRecord
    admission = FetchAdmission(limit: configuration.maximumFetches)
    let rules = ConnectionRules(
      idleTimeout: Double(configuration.idleTimeoutSeconds),
      headTimeout: configuration.requestHeadTimeoutSeconds,
      minimumBytesPerSecond: configuration.minimumRequestBytesPerSecond)
    watch = ConnectionWatch(rules: rules, onCut: { [metrics] in metrics.cut($0.rawValue) })
  }

  /// The port the server listens on (the one picked when ``ServerConfiguration/port`` is 0),
  /// or 0 before ``start()``.
  public var port: UInt16 {
    daemon.withLock { $0?.port ?? 0 }
  }

  /// Requests started and not yet answered.
  public var inflightRequests: Int { metrics.inflight }

  /// The port of the operator listener (``ServerConfiguration/metricsAddress``), or 0 when there
  /// is none or before ``start()``.
  public var metricsPort: UInt16 {
    daemon.withLock { $0?.operatorListener?.port ?? 0 }
  }

  /// Loads libmicrohttpd and starts listening: on ``ServerConfiguration/host`` and
  /// ``ServerConfiguration/port``, and on ``ServerConfiguration/metricsAddress`` when it is set.
  /// - Throws: `invalid_configuration` when libmicrohttpd is not installed, a host is not an
  ///   IP literal, or an address cannot be bound (in use, not local).
  public func start() throws(AttachmentError) {
    guard let mhd = MicroHTTPD.shared else {
      throw AttachmentError(
        .invalidConfiguration,
        "libmicrohttpd (libmicrohttpd.so.12) is not installed: apt-get install libmicrohttpd12.")
    }
    // sendfile to a closed socket raises SIGPIPE; the error is handled where it occurs.
    signal(SIGPIPE, SIG_IGN)
    let context = Unmanaged.passRetained(self).toOpaque()
    let published = ListenAddress(host: configuration.host, port: configuration.port)
    let main: Listening
    var operatorListener: Listening?
    do {
      main = try listen(on: published, as: .published, context: context, mhd: mhd)
    } catch {
      Unmanaged<AttachmentServer>.fromOpaque(context).release()
      throw error
    }
    if let address = configuration.metricsAddress {
      do {
        operatorListener = try listen(on: address, as: .operatorOnly, context: context, mhd: mhd)
      } catch {
        mhd.stopDaemon(main.pointer)
        Unmanaged<AttachmentServer>.fromOpaque(context).release()
        throw error
      }
    }
    guard watch.start() else {
      mhd.stopDaemon(main.pointer)
      if let other = operatorListener { mhd.stopDaemon(other.pointer) }
      Unmanaged<AttachmentServer>.fromOpaque(context).release()
      throw AttachmentError(.invalidConfiguration, "Cannot start the connection watch's thread.")
    }
    daemon.withLock {
      $0 = DaemonHandle(
        pointer: main.pointer, port: main.port, context: context, operatorListener: operatorListener)
    }
  }

  /// Starts one libmicrohttpd daemon on `address` for `listener`'s requests, its callbacks
  /// called with `context`.
  /// - Throws: `invalid_configuration` when the host is not an IP literal or the address cannot
  ///   be bound.
  private func listen(
    on address: ListenAddress, as listener: Listener, context: UnsafeMutableRawPointer, mhd: MicroHTTPD
  ) throws(AttachmentError) -> Listening {
    let flag = listener == .published ? "--listen" : "--metrics-listen"
    guard let socketAddress = SocketAddress(host: address.host, port: address.port) else {
      throw AttachmentError(.invalidConfiguration, "The \(flag) address is not an IPv4 or IPv6 literal.")
    }
    let completed: MHD_RequestCompletedCallback = { cls, connection, slot, termination in
      guard let cls else { return }
      Unmanaged<AttachmentServer>.fromOpaque(cls).takeUnretainedValue()
        .completed(connection: connection, slot: slot, termination: termination)
    }
    let notify: MHD_NotifyConnectionCallback = { cls, connection, _, event in
      guard let cls else { return }
      Unmanaged<AttachmentServer>.fromOpaque(cls).takeUnretainedValue()
        .connection(connection, started: event == .CONNECTION_NOTIFY_STARTED)
    }
    // A C callback captures nothing: one literal per listener says which it is.
    let publicLine: RequestLineCallback = { cls, target, _ in
      guard let cls else { return nil }
      return Unmanaged<AttachmentServer>.fromOpaque(cls).takeUnretainedValue()
        .requestLine(target, on: .published)
    }
    let operatorLine: RequestLineCallback = { cls, target, _ in
      guard let cls else { return nil }
      return Unmanaged<AttachmentServer>.fromOpaque(cls).takeUnretainedValue()
        .requestLine(target, on: .operatorOnly)
    }
    let handler: MHD_AccessHandlerCallback = { cls, connection, url, method, _, _, uploadSize, slot in
      guard let cls, let slot else { return .NO }
      return Unmanaged<AttachmentServer>.fromOpaque(cls).takeUnretainedValue()
        .handle(connection: connection, url: url, method: method, uploadSize: uploadSize, slot: slot)
    }
    var flags = MHD_USE_EPOLL_INTERNAL_THREAD.rawValue | MHD_ALLOW_SUSPEND_RESUME.rawValue
    if socketAddress.isIPv6 { flags |= MHD_USE_IPv6.rawValue }
    let started: OpaquePointer? = socketAddress.withSockaddr { sockaddr in
      let options = daemonOptions(
        address: sockaddr, port: address.port, listener: listener, context: context,
        callbacks: (completed, notify, listener == .published ? publicLine : operatorLine))
      return options.withUnsafeBufferPointer { items in
        ak_mhd_start_daemon(mhd.startDaemon, flags, address.port, handler, context, items.baseAddress)
      }
    }
    guard let started else {
      throw AttachmentError(
        .invalidConfiguration,
        "Cannot listen on \(address.host):\(address.port) (\(flag)): \(bindFailure(socketAddress))")
    }
    return Listening(pointer: started, port: ak_mhd_bound_port(mhd.getDaemonInfo, started))
  }

  /// libmicrohttpd's `MHD_OPTION_URI_LOG_CALLBACK`: the request target before any decoding; what
  /// it returns becomes the request's slot.
  typealias RequestLineCallback =
    @convention(c) (UnsafeMutableRawPointer?, UnsafePointer<CChar>?, OpaquePointer?) ->
    UnsafeMutableRawPointer?

  /// A daemon's options, ending with `END`: the connection limit (with its margin; a few for
  /// the operator listener), the idle timeout, the per-connection memory, the completion,
  /// connection and request-line callbacks (called with `context`), the listen address, and a
  /// thread pool when more than one thread is configured (the public listener only).
  private func daemonOptions(
    address: UnsafePointer<sockaddr>?, port: UInt16, listener: Listener, context: UnsafeMutableRawPointer,
    callbacks: (
      completed: MHD_RequestCompletedCallback, notify: MHD_NotifyConnectionCallback,
      requestLine: RequestLineCallback
    )
  ) -> [MHD_OptionItem] {
    let (completed, notify, requestLine) = callbacks
    let connections =
      listener == .published
      ? configuration.maximumConnections + configuration.connectionMargin : Self.operatorConnections
    var options: [MHD_OptionItem] = [
      MHD_OptionItem(option: .CONNECTION_LIMIT, value: connections, ptr_value: nil),
      // No inactivity timeout of libmicrohttpd's own: the connection watch measures progress.
      MHD_OptionItem(option: .CONNECTION_TIMEOUT, value: 0, ptr_value: nil),
      MHD_OptionItem(
        option: .CONNECTION_MEMORY_LIMIT, value: configuration.connectionMemoryBytes, ptr_value: nil),
      MHD_OptionItem(
        option: .NOTIFY_COMPLETED, value: unsafeBitCast(completed, to: Int.self), ptr_value: context),
      MHD_OptionItem(
        option: .NOTIFY_CONNECTION, value: unsafeBitCast(notify, to: Int.self), ptr_value: context),
      MHD_OptionItem(
        option: .URI_LOG_CALLBACK, value: unsafeBitCast(requestLine, to: Int.self), ptr_value: context),
      MHD_OptionItem(
        option: .SOCK_ADDR, value: 0, ptr_value: address.map { UnsafeMutableRawPointer(mutating: $0) }),
    ]
    if port != 0 && configuration.sharesPort {
      // SO_REUSEPORT, asked for: a new instance binds the port while this one drains (a
      // restart without refusing connections). Never with port 0: the kernel may then pick a
      // port another reuse-port socket of this user holds, and two servers would share it.
      options.append(MHD_OptionItem(option: .LISTENING_ADDRESS_REUSE, value: 1, ptr_value: nil))
    }
    if listener == .published && configuration.threads > 1 {
      options.append(
        MHD_OptionItem(option: .THREAD_POOL_SIZE, value: configuration.threads, ptr_value: nil))
    }
    options.append(MHD_OptionItem(option: .END, value: 0, ptr_value: nil))
    return options
  }

  /// Why `address` cannot be bound, as the system says it (libmicrohttpd does not tell):
  /// tried again here with a socket of its own, without `SO_REUSEPORT`.
  private func bindFailure(_ address: SocketAddress) -> String {
    guard let code = address.bindError() else { return "libmicrohttpd could not start on it." }
    let reason = String(cString: strerror(code))
    if code == EADDRINUSE {
      let shared =
        configuration.sharesPort
        ? "the process holding it did not share it (a hand-over needs --share-port on both)"
        : "another process holds it (a hand-over from a running serve: start both with --share-port)"
      return "\(reason): \(shared)."
    }
    if code == EADDRNOTAVAIL { return "\(reason): not an address of this machine." }
    return reason + "."
  }

  /// Connections the operator listener takes at once: scrapers and probes, not clients.
  static let operatorConnections = 16

  /// Stops gracefully: stops accepting connections, cancels the upstream fetches no request
  /// waits for (those of requests answered at their own `X-Deadline-Ms`), and lets every
  /// request already received finish within ``ServerConfiguration/drainSeconds``; past it, the
  /// rest are cut (their fetches cancelled, their clients told `503`), then the remaining
  /// connections are closed. Returns when done, with what was cut.
  @discardableResult
  public func shutdown() -> DrainSummary {
    guard let mhd = MicroHTTPD.shared, let handle = daemon.withLock({ $0 }) else { return DrainSummary() }
    draining.withLock { $0 = true }
    let listener = mhd.quiesceDaemon(handle.pointer)
    if listener >= 0 { _ = close(listener) }
    var summary = DrainSummary()
    let end = ConnectionWatch.now() + configuration.drainSeconds
    // A suspended connection must be resumed and answered before the daemon stops, and a
    // fetch must end so that it leaves no temporary file.
    while metrics.inflight > 0 || admission.active > 0, ConnectionWatch.now() < end {
      summary.cancelledFetches += admission.cancel(all: false)
      usleep(2000)
    }
    if metrics.inflight > 0 || admission.active > 0 {
      summary.cutRequests = metrics.inflight
      summary.cancelledFetches += admission.cancel(all: true)
      // Cancelled work answers at once: the cut requests get their 503 written, for at most a
      // grace of 2 s. A connection still suspended after that would be resumed after the daemon
      // is gone, so the daemon is then left to the process's exit.
      let grace = ConnectionWatch.now() + 2
      while metrics.inflight > 0, ConnectionWatch.now() < grace { usleep(2000) }
      if suspended.withLock({ $0 }) > 0 { return summary }
    }
    mhd.stopDaemon(handle.pointer)
    // The operator listener answered scrapes through the drain; it goes last.
    if let other = handle.operatorListener { mhd.stopDaemon(other.pointer) }
    watch.stop()
    daemon.withLock { $0 = nil }
    Unmanaged<AttachmentServer>.fromOpaque(handle.context).release()
    return summary
  }

  /// libmicrohttpd's connection notice: counted, and watched from its start to its end.
  func connection(_ connection: OpaquePointer?, started: Bool) {
    metrics.connection(started ? 1 : -1)
    if started {
      watch.opened(connection, descriptor: MicroHTTPD.shared?.descriptor(connection) ?? -1)
    } else {
      watch.closed(connection)
    }
  }

  var isDraining: Bool { draining.withLock { $0 } }

  private static func defaultInfoRecord(_ url: String, _ result: Result<Attachment, AttachmentError>) -> JSON
  {
    switch result {
    case .success(let attachment):
      .object([
        ("input", .string(Redaction.redact(url))), ("outcome", .string("accepted")),
        ("source", .string(attachment.source.rawValue)), ("mime", .string(attachment.validation.mime)),
        ("uti", .string(attachment.uti)), ("bytes", .int(attachment.bytes)),
        ("sha256", .string(attachment.sha256)),
      ])
    case .failure(let error):
      .object([
        ("input", .string(Redaction.redact(url))),
        ("outcome", .string(error.isRejection ? "rejected" : "failed")),
        ("error", .object([("code", .string(error.code.rawValue)), ("message", .string(error.message))])),
      ])
    }
  }
}

/// What a drain (``AttachmentServer/shutdown()``) had to cut.
public struct DrainSummary: Sendable, Equatable {
  /// Upstream fetches (URL groups) cancelled: those no request waited for, and at the drain's
  /// bound all the rest.
  public var cancelledFetches = 0
  /// Requests still unanswered (or still being sent) when the drain's bound passed.
  public var cutRequests = 0

  /// Nothing cut.
  public init() {}
}

/// The running daemons.
struct DaemonHandle: @unchecked Sendable {
  /// The public listener's daemon.
  let pointer: OpaquePointer
  /// The public listener's port.
  let port: UInt16
  /// The server, retained for the daemons' callbacks.
  let context: UnsafeMutableRawPointer
  /// The operator listener, when configured.
  let operatorListener: Listening?
}

/// One started daemon and the port it bound.
struct Listening: @unchecked Sendable {
  /// libmicrohttpd's daemon.
  let pointer: OpaquePointer
  /// The port it listens on.
  let port: UInt16
}
