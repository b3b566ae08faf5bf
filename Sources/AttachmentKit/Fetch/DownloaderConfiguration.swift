/// Limits and policies for every transfer a ``Downloader`` makes.
///
/// The defaults suit a Notification Service Extension: about 30 s of wall time in all, so the
/// caller's deadline (not these values) is what normally bounds a request.
public struct DownloaderConfiguration: Sendable, Equatable {
  /// How long establishing a connection (TCP and TLS) may take per attempt.
  /// Default: 5 s. Never longer than what is left of the request's deadline.
  public var connectTimeout: Duration = .seconds(5)

  /// The low-speed abort: a transfer slower than ``LowSpeedLimit/bytesPerSecond`` for the
  /// whole ``LowSpeedLimit/window`` fails with `too_slow`. Default: 1,024 B/s over 10 s.
  /// `nil` turns it off (the deadline still applies).
  public var lowSpeedLimit: LowSpeedLimit? = LowSpeedLimit(bytesPerSecond: 1_024, window: .seconds(10))

  /// The largest body accepted, in bytes; a request may lower it. Enforced as bytes arrive (and
  /// before the body when `Content-Length` declares more). Default: 50 MB, the largest
  /// category Apple accepts (video).
  public var maximumBodyBytes: Int64 = 50_000_000

  /// The cap on all response header bytes of one request, redirects included, in bytes.
  /// Default: 64 KiB. Over it the transfer fails with `headers_too_large`.
  public var maximumHeaderBytes: Int = 64 * 1024

  /// How many times a transient failure is retried, within the same deadline. Default: 1.
  /// `0` turns retrying off.
  ///
  /// Retried: a connection refused or reset, nothing answered, a body cut short (libcurl 7, 18,
  /// 52, 55, 56), and `502`, `503` and `504` — after the `Retry-After` wait (seconds or an HTTP
  /// date) when it ends before the deadline; when it would not, the failure is the answer at
  /// once. Never retried: any other status, a refusal by an inspector or the validator, the
  /// deadline, cancellation, a blocked address, TLS. A body cut short resumes with `Range` and
  /// `If-Range` when its response had a strong ETag or a `Last-Modified` and
  /// `Accept-Ranges: bytes`; a `200` to that request starts the body over. See
  /// ``TransferTimings/attempts``.
  public var retries: Int = 1

  /// How many redirects are followed. Default: 5. One more fails with `too_many_redirects`.
  public var maximumRedirects: Int = 5

  /// How many connections are opened to one host at once; transfers beyond it wait for a free
  /// connection (the deadline covers the wait). Default: 16.
  public var maximumConnectionsPerHost: Int = 16

  /// An extra PEM file of certificate authorities to trust besides the system's. Default: none.
  /// Certificate verification itself is always on and cannot be turned off.
  public var certificateAuthorityFile: String? = nil

  /// Whether transfers may connect to loopback, private, link-local and other non-public
  /// addresses. Default: `false` — such connections fail with `blocked_address`, checked on
  /// the address actually connected to (after DNS, on every redirect). Turn it on only for
  /// trusted URLs (tests and tools on loopback do).
  public var allowPrivateNetworks = false

  /// Exact IP addresses the private-network guard lets through although they are not public,
  /// such as an origin or CDN inside your own network (`"10.1.2.3"`, `"fd00::5"`). Default:
  /// none. Each is matched against the address actually connected to, so a redirect or a DNS
  /// answer that leads anywhere else is still refused. Strings that are not IP addresses are
  /// ignored.
  public var allowedAddresses: [String] = []

  /// The hosts and URL prefixes fetches may go to, checked for the URL and for every redirect
  /// before it is followed; anything else fails with `origin_not_allowed`. Independent of the
  /// private-network guard (both apply). Default: ``OriginAllowlist/any``.
  public var allowedOrigins = OriginAllowlist.any

  /// Request headers sent only to the URLs under their prefix (credentials of a private
  /// origin), never on a redirect to a URL that gets other ones, never logged or reported.
  /// Default: ``OriginHeaders/none``.
  public var originHeaders = OriginHeaders.none

  /// A proxy every request goes through, or `nil` (the default) to connect directly.
  ///
  /// Proxy variables in the environment (`http_proxy`, `https_proxy`, `ALL_PROXY`,
  /// `no_proxy`) are always ignored: only this setting sends traffic through a proxy, so an
  /// egress proxy configured for other programs on the host cannot silently bypass the
  /// private-network guard. Through a proxy the guard sees only the proxy's address; see
  /// ``Proxy/acceptsUncheckedDestinations`` for what it still checks.
  public var proxy: Proxy? = nil

  /// The `User-Agent` header sent with every request.
  public var userAgent: String = "AttachmentKit/0.1"

  /// The `Accept` header sent with every request: the MIME types AttachmentKit accepts, then
  /// `*/*;q=0.1`. It never names `image/webp` or `image/avif`, so a CDN that negotiates the
  /// format answers with one that needs no conversion. Default: ``defaultAccept``. An empty
  /// string sends no `Accept` header at all.
  public var accept: String = Self.defaultAccept

  /// Every accepted type's MIME type, in ``MediaType``'s order, then `*/*;q=0.1`, so a
  /// server without the preferred types still answers (and the validator judges the bytes).
  public static let defaultAccept: String =
    (MediaType.allCases.map(\.mime) + ["*/*;q=0.1"]).joined(separator: ", ")

  /// The size of libcurl's receive buffer in bytes, which bounds one write to the sink.
  /// Default: 64 KiB.
  public var receiveBufferBytes: Int = 64 * 1024

  /// Makes the default configuration.
  public init() {}

  /// A proxy for every request, and what the caller accepts about the address guard through it.
  public struct Proxy: Sendable, Equatable {
    /// The proxy's URL in libcurl's syntax: `http://host:port`, `https://host:port`,
    /// `socks5h://host:port` (credentials may be given as `user:password@`).
    public var url: String

    /// Whether the caller accepts that the private-network guard cannot check where requests
    /// really go. Default: `false`.
    ///
    /// Through a proxy, libcurl connects only to the proxy, and the proxy resolves the
    /// destination's name itself, so the guard can no longer check the address connected to.
    /// It still refuses, before any packet is sent and on every redirect, a URL whose host is
    /// an IP literal in a refused range (in any spelling: dotted, decimal, hex, bracketed
    /// IPv6) or a `localhost` name. It cannot refuse a DNS name that resolves to a private
    /// address: only the proxy can. With ``DownloaderConfiguration/allowPrivateNetworks`` off,
    /// a proxy without this acceptance makes every request fail with `invalid_configuration`.
    public var acceptsUncheckedDestinations: Bool

    /// Makes a proxy setting.
    public init(url: String, acceptsUncheckedDestinations: Bool = false) {
      self.url = url
      self.acceptsUncheckedDestinations = acceptsUncheckedDestinations
    }
  }

  /// A minimum transfer speed held over a window of time.
  public struct LowSpeedLimit: Sendable, Equatable {
    /// The speed a transfer must reach, in bytes per second.
    public var bytesPerSecond: Int
    /// How long it may stay below that speed; libcurl counts in whole seconds, so this is
    /// rounded up to at least one second.
    public var window: Duration

    /// Makes a low-speed limit of `bytesPerSecond` held over `window`.
    public init(bytesPerSecond: Int, window: Duration) {
      self.bytesPerSecond = bytesPerSecond
      self.window = window
    }
  }
}
