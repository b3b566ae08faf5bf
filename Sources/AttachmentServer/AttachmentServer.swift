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
  let signer: URLSigner
  let infoRecord: @Sendable (String, Result<Attachment, AttachmentError>) -> JSON
  let metrics = Metrics()
  let admission: FetchAdmission
  let hitMemo = HitMemo()
  let refusalMemo = RefusalMemo()
  let cacheGauges = CacheGauges()
  private let daemon = Locked<DaemonHandle?>(nil)
  private let draining = Locked(false)

  /// A server that answers with `pipeline`'s attachments, verifying paths with `signer`.
  /// `infoRecord` makes the JSON of `GET /v1/info/…` from a URL (redacted) and its outcome (the command
  /// line passes its `fetch --json` record); by default, a small record of the attachment.
  public init(
    configuration: ServerConfiguration, pipeline: AttachmentPipeline, signer: URLSigner,
    infoRecord: (@Sendable (String, Result<Attachment, AttachmentError>) -> JSON)? = nil
  ) {
    self.configuration = configuration
    self.pipeline = pipeline
    self.signer = signer
    self.infoRecord = infoRecord ?? Self.defaultInfoRecord
    admission = FetchAdmission(limit: configuration.maximumFetches)
  }

  /// The port the server listens on (the one picked when ``ServerConfiguration/port`` is 0),
  /// or 0 before ``start()``.
  public var port: UInt16 {
    daemon.withLock { $0?.port ?? 0 }
  }

  /// Requests started and not yet answered.
  public var inflightRequests: Int { metrics.inflight }

  /// Loads libmicrohttpd and starts listening.
  /// - Throws: `invalid_configuration` when libmicrohttpd is not installed, the host is not an
  ///   IP literal, or the address cannot be bound (in use, not local).
  public func start() throws(AttachmentError) {
    guard let mhd = MicroHTTPD.shared else {
      throw AttachmentError(
        .invalidConfiguration,
        "libmicrohttpd (libmicrohttpd.so.12) is not installed: apt-get install libmicrohttpd12.")
    }
    // sendfile to a closed socket raises SIGPIPE; the error is handled where it occurs.
    signal(SIGPIPE, SIG_IGN)
    guard let address = SocketAddress(host: configuration.host, port: configuration.port) else {
      throw AttachmentError(.invalidConfiguration, "The listen address is not an IPv4 or IPv6 literal.")
    }
    let context = Unmanaged.passRetained(self).toOpaque()
    let completed: MHD_RequestCompletedCallback = { cls, connection, slot, termination in
      guard let cls else { return }
      Unmanaged<AttachmentServer>.fromOpaque(cls).takeUnretainedValue()
        .completed(slot: slot, termination: termination)
    }
    let notify: MHD_NotifyConnectionCallback = { cls, _, _, event in
      guard let cls else { return }
      let server = Unmanaged<AttachmentServer>.fromOpaque(cls).takeUnretainedValue()
      server.metrics.connection(event == .CONNECTION_NOTIFY_STARTED ? 1 : -1)
    }
    let handler: MHD_AccessHandlerCallback = { cls, connection, url, method, _, _, uploadSize, slot in
      guard let cls, let slot else { return .NO }
      return Unmanaged<AttachmentServer>.fromOpaque(cls).takeUnretainedValue()
        .handle(connection: connection, url: url, method: method, uploadSize: uploadSize, slot: slot)
    }
    var flags = MHD_USE_EPOLL_INTERNAL_THREAD.rawValue | MHD_ALLOW_SUSPEND_RESUME.rawValue
    if address.isIPv6 { flags |= MHD_USE_IPv6.rawValue }
    let started: OpaquePointer? = address.withSockaddr { sockaddr in
      let options = daemonOptions(
        address: sockaddr, context: context, completed: completed, notify: notify)
      return options.withUnsafeBufferPointer { items in
        ak_mhd_start_daemon(mhd.startDaemon, flags, configuration.port, handler, context, items.baseAddress)
      }
    }
    guard let started else {
      Unmanaged<AttachmentServer>.fromOpaque(context).release()
      throw AttachmentError(
        .invalidConfiguration,
        "Cannot listen on \(configuration.host):\(configuration.port) (in use, or not an address of this machine)."
      )
    }
    let port = ak_mhd_bound_port(mhd.getDaemonInfo, started)
    daemon.withLock { $0 = DaemonHandle(pointer: started, port: port, context: context) }
  }

  /// The daemon's options, ending with `END`: the connection limit (with its margin), the idle
  /// timeout, the per-connection memory, the completion and connection callbacks (called with
  /// `context`), the listen address, and a thread pool when more than one thread is configured.
  private func daemonOptions(
    address: UnsafePointer<sockaddr>?, context: UnsafeMutableRawPointer,
    completed: MHD_RequestCompletedCallback, notify: MHD_NotifyConnectionCallback
  ) -> [MHD_OptionItem] {
    var options: [MHD_OptionItem] = [
      MHD_OptionItem(
        option: .CONNECTION_LIMIT,
        value: configuration.maximumConnections + configuration.connectionMargin, ptr_value: nil),
      MHD_OptionItem(
        option: .CONNECTION_TIMEOUT, value: Int(configuration.idleTimeoutSeconds), ptr_value: nil),
      MHD_OptionItem(
        option: .CONNECTION_MEMORY_LIMIT, value: configuration.connectionMemoryBytes, ptr_value: nil),
      MHD_OptionItem(
        option: .NOTIFY_COMPLETED, value: unsafeBitCast(completed, to: Int.self), ptr_value: context),
      MHD_OptionItem(
        option: .NOTIFY_CONNECTION, value: unsafeBitCast(notify, to: Int.self), ptr_value: context),
      MHD_OptionItem(
        option: .SOCK_ADDR, value: 0, ptr_value: address.map { UnsafeMutableRawPointer(mutating: $0) }),
    ]
    if configuration.threads > 1 {
      options.append(
        MHD_OptionItem(option: .THREAD_POOL_SIZE, value: configuration.threads, ptr_value: nil))
    }
    options.append(MHD_OptionItem(option: .END, value: 0, ptr_value: nil))
    return options
  }

  /// Stops gracefully: stops accepting connections, lets every request already received finish
  /// (each within its deadline) and every upstream fetch end, then closes the remaining idle
  /// connections. Returns when done.
  public func shutdown() {
    guard let mhd = MicroHTTPD.shared, let handle = daemon.withLock({ $0 }) else { return }
    draining.withLock { $0 = true }
    let listener = mhd.quiesceDaemon(handle.pointer)
    if listener >= 0 { _ = close(listener) }
    // A suspended connection must be resumed and answered before the daemon stops, and a
    // fetch that outlived its request (an earlier X-Deadline-Ms) must end so that it leaves no
    // temporary file; the server's deadline bounds both waits.
    while metrics.inflight > 0 || admission.active > 0 { usleep(2000) }
    mhd.stopDaemon(handle.pointer)
    daemon.withLock { $0 = nil }
    Unmanaged<AttachmentServer>.fromOpaque(handle.context).release()
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

/// The running daemon.
struct DaemonHandle: @unchecked Sendable {
  let pointer: OpaquePointer
  let port: UInt16
  let context: UnsafeMutableRawPointer
}
