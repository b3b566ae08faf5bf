/// The one error every part of AttachmentKit throws: the downloader, the validator, the cache
/// and the pipeline.
///
/// Match on ``code`` (a stable, machine-readable string such as `"deadline_exceeded"`) rather
/// than on ``message``, which is written for people and may change. Codes are never renamed;
/// new ones may be added, so treat an unknown code as a generic failure. Each code declares its
/// ``Kind`` where it is declared, and every classification (a rejection or a failure, whether a
/// stale copy may stand in, the HTTP status `attachkit serve` answers with) reads that kind.
public struct AttachmentError: Error, Sendable, Equatable, CustomStringConvertible {
  /// What part of the work an error comes from: the one classification every face reads.
  public enum Kind: String, Sendable, CaseIterable {
    /// The request cannot be made as asked (a malformed URL, a scheme or address the caller's
    /// policy refuses): no byte was fetched, and asking again changes nothing.
    case request
    /// The network or the server failed (DNS, connect, TLS, an HTTP error status, a cut
    /// transfer, the deadline): a stale cached copy may stand in.
    case fetch
    /// The bytes arrived but are not an acceptable attachment (wrong type or codec, too large,
    /// too long, too many pixels, cut short in their structure, empty).
    case rejection
    /// This machine failed or was told to stop (the cache's disk, the configuration, the
    /// caller's cancellation).
    case local
    /// A request to the media proxy (`attachkit serve`) was refused before any fetch.
    case proxy
  }

  /// The stable code of an ``AttachmentError``: scripts and logs key on its ``rawValue``.
  /// Two codes are equal when their strings are.
  public struct Code: Hashable, Sendable, CustomStringConvertible {
    /// The code as scripts see it, in `snake_case` (for example `"too_large"`).
    public let rawValue: String
    /// The kind every error with this code has unless its maker says otherwise (only
    /// `truncated` is made as both: a cut transfer is a fetch failure, a file whose structure
    /// is cut short a rejection).
    public let kind: Kind

    /// Declares a code and its kind: the one place a code is classified.
    package init(_ rawValue: String, kind: Kind) {
      self.rawValue = rawValue
      self.kind = kind
    }

    /// The code string itself.
    public var description: String { rawValue }

    /// Codes are equal when their strings are.
    public static func == (lhs: Code, rhs: Code) -> Bool { lhs.rawValue == rhs.rawValue }

    /// Hashes the code string.
    public func hash(into hasher: inout Hasher) { hasher.combine(rawValue) }
  }

  /// What went wrong, as a stable code.
  public let code: Code
  /// A one-sentence explanation for people; it never contains URL credentials.
  public let message: String
  /// The HTTP status of the final response, for ``Code/httpStatus`` (and wherever it is known).
  public internal(set) var httpStatus: Int?
  /// What the bytes really are (a MIME type such as `"image/webp"`), for refused content.
  public internal(set) var detected: String?
  /// Which part of the work failed: the code's own kind, unless the maker said otherwise.
  public let kind: Kind
  /// The body bytes a download had received when it failed (cancelled, out of time, cut
  /// short), so that a caller's count of the bytes it transferred includes them; `nil` when no
  /// body had begun or the failure came from no download.
  public internal(set) var bytesReceived: Int64?
  /// Why a rescue's decoder ended, when that ending is a verdict on the source itself (its
  /// worker crashed, ran out of CPU time or memory on it): no second decoder is handed such an
  /// input (``RescueFallback``). A value, set where the worker's end is seen, never read back
  /// from the message; `nil` for every other error.
  package var sourceVerdict: SourceVerdict?

  /// How a rescue's decoder ended on a source that no other decoder should be given.
  package enum SourceVerdict: String, Sendable, Codable {
    /// Its worker died of a signal (a crash, the sandbox's filter).
    case workerDied
    /// Its worker was killed at its CPU limit.
    case cpuExhausted
    /// Its worker reached the memory ceiling.
    case memoryExhausted
  }

  /// Whether the bytes were refused as an attachment (wrong type, too large, too long, too
  /// many pixels, cut short, empty), as opposed to the fetch itself failing.
  public var isRejection: Bool { kind == .rejection }

  /// Makes an error with a code and a message for people; `kind` overrides the code's own
  /// (the validator's `truncated` is a rejection). Package-internal: only AttachmentKit and its
  /// faces make errors, so every one carries a declared code.
  package init(
    _ code: Code, _ message: String, httpStatus: Int? = nil, detected: String? = nil, kind: Kind? = nil
  ) {
    self.code = code
    self.message = message
    self.httpStatus = httpStatus
    self.detected = detected
    self.kind = kind ?? code.kind
  }

  /// Whether this failure is the work stopping (its deadline passed, or its caller left), not
  /// a verdict on the file: no fallback is tried after it.
  var isStop: Bool { code == .deadlineExceeded || code == .cancelled }

  /// `code: message`, fit for a log line.
  public var description: String { "\(code.rawValue): \(message)" }
}

extension AttachmentError.Code {
  // Fetch
  /// The URL could not be parsed, or has no host.
  public static let invalidURL = Self("invalid_url", kind: .request)
  /// The URL (or a redirect) uses a scheme other than `http` or `https`.
  public static let unsupportedScheme = Self("unsupported_scheme", kind: .request)
  /// The request names a profile there is not (see ``AttachmentProfile/init(named:)``).
  public static let unknownProfile = Self("unknown_profile", kind: .request)
  /// The host name could not be resolved.
  public static let dnsFailed = Self("dns_failed", kind: .fetch)
  /// No connection could be made (refused, unreachable, or the connect timeout passed).
  public static let connectFailed = Self("connect_failed", kind: .fetch)
  /// The URL (or a redirect, or its DNS answer) leads to a loopback, private or link-local
  /// address and private networks are not allowed.
  public static let blockedAddress = Self("blocked_address", kind: .request)
  /// The URL, or a redirect, leads outside the allowed origins
  /// (``DownloaderConfiguration/allowedOrigins``).
  public static let originNotAllowed = Self("origin_not_allowed", kind: .request)
  /// A presigned URL (S3, Google Cloud Storage, CloudFront, Azure SAS) whose own query says it
  /// has expired: refused without a request, since the origin would refuse it.
  public static let presignedURLExpired = Self("presigned_url_expired", kind: .request)
  /// The TLS handshake failed, including an untrusted or invalid certificate.
  public static let tlsFailed = Self("tls_failed", kind: .fetch)
  /// The final response had a status that is not a success (see ``AttachmentError/httpStatus``).
  public static let httpStatus = Self("http_status", kind: .fetch)
  /// More redirects than the configured maximum.
  public static let tooManyRedirects = Self("too_many_redirects", kind: .fetch)
  /// The absolute deadline passed before the work finished.
  public static let deadlineExceeded = Self("deadline_exceeded", kind: .fetch)
  /// The transfer stayed below the configured low-speed limit for the whole window.
  public static let tooSlow = Self("too_slow", kind: .fetch)
  /// The body is (or declared itself) larger than the limit.
  public static let tooLarge = Self("too_large", kind: .rejection)
  /// The response headers exceeded the configured cap.
  public static let headersTooLarge = Self("headers_too_large", kind: .fetch)
  /// The connection closed before the declared length arrived, or the file's structure is cut short.
  public static let truncated = Self("truncated", kind: .fetch)
  /// The body was empty.
  public static let empty = Self("empty", kind: .rejection)
  /// Reading or writing a local file failed (disk full, permissions, a missing directory).
  public static let ioError = Self("io_error", kind: .local)
  /// The caller's task was cancelled.
  public static let cancelled = Self("cancelled", kind: .local)
  /// The configuration cannot be used as given (for example a proxy with the private-network
  /// guard on, without accepting what the guard cannot check through it).
  public static let invalidConfiguration = Self("invalid_configuration", kind: .local)
  /// The configured object store (``StoreConfiguration``) cannot be used, found by the check a
  /// face runs at start (``AttachmentPipeline/checkStore(timeout:)``): its endpoint cannot be reached,
  /// its bucket does not exist, or it refuses the credentials; the message names the setting.
  public static let storeUnavailable = Self("store_unavailable", kind: .local)
  /// The peer answered with something that is not valid HTTP, or the transfer failed in a way
  /// no other code describes.
  public static let networkError = Self("network_error", kind: .fetch)

  // Validation
  /// The bytes are not a type the product accepts (see ``AttachmentError/detected``).
  public static let unsupportedType = Self("unsupported_type", kind: .rejection)
  /// The container is accepted but iOS decodes none of its video tracks (for a video) or
  /// audio tracks (for audio); ``AttachmentError/detected`` names the codec as a MIME type
  /// with `codecs`, e.g. `audio/mp4; codecs="dtsc"`.
  public static let unsupportedCodec = Self("unsupported_codec", kind: .rejection)
  /// A video lasts longer than the configured maximum.
  public static let tooLong = Self("too_long", kind: .rejection)
  /// A video's duration cannot be established from its container, its tracks, its time
  /// stamps or its bit rate, so the length limit cannot be checked.
  public static let unknownDuration = Self("unknown_duration", kind: .rejection)
  /// An image's decoded size (width × height × 4 bytes) exceeds the configured ceiling.
  public static let tooManyPixels = Self("too_many_pixels", kind: .rejection)
  /// A source for a rescue needs more decoding work than the rescue allows: more scans (a
  /// progressive JPEG), frames (an animation) or bytes per pixel than its configuration's
  /// bounds; the message names which.
  public static let tooComplex = Self("too_complex", kind: .rejection)
  /// The file's structure is accepted, but the decoder cannot open it or start it: FFmpeg,
  /// in a rescue worker, does not read its container as a player would, or the stream the
  /// attachment plays does not decode in its first second (``DecodeCheckConfiguration``). The
  /// message says what failed. No rescuer takes it: what no decoder starts, none re-encodes.
  public static let undecodable = Self("undecodable", kind: .rejection)
}

extension AttachmentError {
  /// The task was cancelled: a convenience used throughout the library.
  static func cancelledError() -> AttachmentError {
    AttachmentError(.cancelled, "The request was cancelled.")
  }
}
