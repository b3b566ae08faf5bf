/// A finished download: where the body is, what the server said, and how long each phase took.
///
/// On success the body is in a temporary file that now belongs to the caller, who must move
/// or delete it (see ``file``). A `304` carries no file.
public struct Download: Sendable {
  /// The URL that was requested.
  public var url: String
  /// The URL of the final response, after redirects.
  public var finalURL: String
  /// The HTTP status of the final response: 2xx, or 304 for a conditional request. For a body
  /// resumed by a retry (see ``TransferTimings/resumedBytes``), the status of the response its
  /// first bytes came from (the `200`, not the `206`).
  public var status: Int
  /// The final response's headers; for a resumed body, those of the response its first bytes
  /// came from (the `206` only continued it).
  public var headers: ResponseHeaders
  /// The path of the temporary file holding the body (created 0600 in the request's
  /// directory), or `nil` for a `304`.
  public var file: String?
  /// How many body bytes were received and written.
  public var bytesReceived: Int64
  /// Where the body's SHA-256 stands: computed during the transfer, left to the caller, or
  /// absent (a `304` has no body).
  public var digest: Digest
  /// How long each phase took.
  public var timings: TransferTimings
  /// How many redirects were followed.
  public var redirectCount: Int
  /// The class of the address the final response came from (libcurl's primary IP of the
  /// last connection), or `nil` when libcurl does not say. The cache keeps it so a later hit
  /// is judged against the caller's address policy.
  public var peerAddressClass: PeerAddressClass?
  /// The TLS the final response came over (version, forward secrecy), or `nil` over plain
  /// HTTP or when libcurl's TLS library does not say.
  public var tls: TLSFacts? = nil

  /// Whether the server answered a conditional request with `304 Not Modified`.
  public var isNotModified: Bool { status == 304 }

  /// The SHA-256 of the body as 64 lower-case hex digits when the transfer computed it, else
  /// `nil` (see ``digest``).
  public var sha256: String? {
    if case .computed(let hex) = digest { return hex }
    return nil
  }

  /// Where a download's body digest stands.
  public enum Digest: Sendable, Equatable {
    /// The SHA-256 of the body, 64 lower-case hex digits, computed as it was written.
    case computed(String)
    /// Not computed: the caller asked to hash this small body itself as it checks it (the
    /// pipeline does; see `ReadAlongDigest`).
    case deferred
    /// There is no body (`304 Not Modified`).
    case noBody
  }
}

/// Phase times of one transfer, in microseconds from its start (libcurl's `*_TIME_T` values).
/// Each is cumulative: `connect` includes `dns`, and so on.
public struct TransferTimings: Sendable, Equatable, Codable {
  /// Name resolution finished.
  public var dnsMicroseconds: Int64 = 0
  /// The TCP connection was made.
  public var connectMicroseconds: Int64 = 0
  /// The TLS handshake finished (0 for plain HTTP).
  public var tlsMicroseconds: Int64 = 0
  /// The first response byte arrived.
  public var firstByteMicroseconds: Int64 = 0
  /// The whole transfer, redirects included.
  public var totalMicroseconds: Int64 = 0
  /// How many attempts the download took (1 unless a transient failure was retried; see
  /// ``DownloaderConfiguration/retries``). The phase times above are the last attempt's.
  public var attempts: Int = 1
  /// How many body bytes the last attempt did not fetch again because it resumed them with a
  /// ranged request (`206`), in bytes; 0 when the body came whole from one response.
  public var resumedBytes: Int64 = 0

  /// Makes zeroed timings (of one attempt).
  public init() {}

  private enum CodingKeys: String, CodingKey {
    case dnsMicroseconds, connectMicroseconds, tlsMicroseconds, firstByteMicroseconds
    case totalMicroseconds, attempts, resumedBytes
  }

  /// Decodes timings; `attempts` and `resumedBytes` may be absent (timings stored before
  /// retries existed), and are then 1 and 0.
  public init(from decoder: any Decoder) throws {
    let container = try decoder.container(keyedBy: CodingKeys.self)
    dnsMicroseconds = try container.decode(Int64.self, forKey: .dnsMicroseconds)
    connectMicroseconds = try container.decode(Int64.self, forKey: .connectMicroseconds)
    tlsMicroseconds = try container.decode(Int64.self, forKey: .tlsMicroseconds)
    firstByteMicroseconds = try container.decode(Int64.self, forKey: .firstByteMicroseconds)
    totalMicroseconds = try container.decode(Int64.self, forKey: .totalMicroseconds)
    attempts = try container.decodeIfPresent(Int.self, forKey: .attempts) ?? 1
    resumedBytes = try container.decodeIfPresent(Int64.self, forKey: .resumedBytes) ?? 0
  }
}
