import AttachmentKit
import Glibc

/// The media proxy's settings: where it listens and how far it lets load grow. Every limit is a
/// bound, never a queue: past it a request is answered `503 overloaded` at once.
public struct ServerConfiguration: Sendable {
  /// The address to listen on, an IPv4 or IPv6 literal. Default: `127.0.0.1` (loopback only).
  public var host: String
  /// The TCP port; `0` picks a free one (see ``AttachmentServer/port``). Default: `8080`.
  public var port: UInt16
  /// A second listener for the operator's routes (`--metrics-listen`): when set, `/metrics` is
  /// answered there only (the public listener answers it `404`); `/readyz` and `/healthz` are
  /// answered on both, since a tier's probe reaches only the public port. Proxy paths are
  /// `404` on it. Default: none (every route on the public listener).
  public var metricsAddress: ListenAddress?
  /// Accept `/v1/u/<base64url(url)>` without a signature. For trusted networks only; the
  /// command warns at start when it is on. Default: `false`.
  public var acceptsUnsigned = false
  /// Connections open at once; past it a new connection is answered `503 overloaded` and closed
  /// (and past it by ``connectionMargin`` it is refused at accept). Default: `512`.
  public var maximumConnections = 512
  /// Extra connections accepted only to be told `503`, over ``maximumConnections``. Default: `16`.
  public var connectionMargin = 16
  /// Distinct URLs being fetched (or revalidated) upstream at once; requests for a URL already
  /// being fetched join that fetch and do not count. Default: `64`.
  public var maximumFetches = 64
  /// The deadline of each request, from its first byte to its answer, in seconds; a request
  /// may shorten it with `X-Deadline-Ms`. Default: `25` (headroom in iOS's 30 s budget).
  public var deadlineSeconds: Double = 25
  /// How long a connection may stay idle (no byte received from the client and none of the
  /// answer acknowledged by it, as the kernel counts them) before it is closed, in seconds.
  /// Waiting for a fetch is not idle, and a client that keeps reading a large answer slowly is
  /// not idle either. Default: `10`.
  public var idleTimeoutSeconds: UInt32 = 10
  /// A request head must be complete this long after its first byte arrived, in seconds, or the
  /// connection is answered `408` and closed (slowloris). Default: `10`.
  public var requestHeadTimeoutSeconds: Double = 10
  /// The slowest a request head may arrive, in bytes per second, from one second after its first
  /// byte; slower, it is answered `408` and closed. Default: `100`.
  public var minimumRequestBytesPerSecond: Double = 100
  /// The memory of one connection, in bytes, which caps the request line and headers (a
  /// longer request is answered `414` or `431` by libmicrohttpd). Default: 32 KiB.
  public var connectionMemoryBytes = 32 * 1024
  /// The longest a drain (SIGTERM) waits for the requests in flight, in seconds; past it they
  /// are cut (and the command logs how many). Fetches no request waits for are cancelled at
  /// once. Default: `30` (a request's deadline and a margin, well under systemd's 90 s).
  public var drainSeconds: Double = 30
  /// Whether the listeners share their ports (`SO_REUSEPORT`) with another process of this
  /// user that also shares them: the zero-downtime hand-over, a new instance listening before
  /// the old one drains (both must be started with it; while both listen, the kernel splits new
  /// connections between them). Default: `false`, and a port another process holds is refused
  /// ("Address already in use"), so a second instance never starts silently beside the first.
  public var sharesPort = false
  /// Event-loop threads (libmicrohttpd's epoll thread pool). Default: the online CPUs, 1 to 8.
  public var threads = max(1, min(8, Int(sysconf(Int32(_SC_NPROCESSORS_ONLN)))))
  /// The tier in front (`--trust-forwarded-from`): a request from one of these addresses may
  /// name its client in `X-Forwarded-For` and keep its `X-Request-Id`. Default: none.
  public var trustedForwarders = TrustedNetworks()
  /// Write a JSON access-log line per request to standard error. Default: `true`.
  public var accessLog = true
  /// Headers on every answer besides serve's own: `X-Content-Type-Options: nosniff` and
  /// `Content-Security-Policy: default-src 'none'; sandbox`, then the operator's (`--header`).
  /// Default: ``ResponseHeaderFields/contentSafety``.
  public var responseHeaders = ResponseHeaderFields.contentSafety
  /// The image answered in place of a refused file (`422`) or a failed upstream (`502`, `504`) on
  /// the file routes (`--fallback-image`): `200` with its bytes, `X-Attachment-Fallback: 1` and
  /// a short lifetime (``fallbackLifetimeSeconds``). Request errors (a bad signature, a
  /// malformed path or URL, a refused address or origin, an expired path, overload) are never
  /// replaced, nor is the info route. Default: none (every failure is answered as an error).
  public var fallbackImage: FallbackImage?
  /// How long a fallback answer may be kept, in seconds: its `Cache-Control: public, max-age=N`
  /// (cut further on an expiring path). Short, so that a tier asks again soon and gets the
  /// real file once the origin has it. Default: `60`.
  public var fallbackLifetimeSeconds = 60
  /// The version `attachkit_build_info` reports. Default: `unknown`.
  public var version = "unknown"
  /// The rescue workers' sandbox layers and whether each is in force, as the start's check found
  /// them (``AttachmentKit/RescueWorkers/sandboxReport(configuration:keyFile:)``):
  /// `/metrics` reports each as `attachkit_sandbox_layer{layer="…"}` 1 or 0. Default: empty
  /// (no rescue, no such metric).
  public var sandboxLayers: [SandboxReport.Layer] = []

  /// Makes a configuration listening on `host:port`, with the defaults above.
  public init(host: String = "127.0.0.1", port: UInt16 = 8080) {
    self.host = host
    self.port = port
  }
}

/// An address to listen on: an IPv4 or IPv6 literal and a TCP port.
public struct ListenAddress: Sendable, Equatable {
  /// The IP literal (`127.0.0.1`, `::1`, `0.0.0.0`).
  public var host: String
  /// The TCP port; `0` picks a free one.
  public var port: UInt16

  /// The address `host:port`.
  public init(host: String, port: UInt16) {
    self.host = host
    self.port = port
  }
}
