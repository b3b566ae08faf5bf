/// The one error every part of AttachmentKit throws: the downloader, the validator, the cache
/// and the pipeline.
///
/// Match on ``code`` (a stable, machine-readable string such as `"deadline_exceeded"`) rather
/// than on ``message``, which is written for people and may change. Codes are never renamed;
/// new ones may be added, so treat an unknown code as a generic failure.
public struct AttachmentError: Error, Sendable, Equatable, CustomStringConvertible {
  /// The stable code of an ``AttachmentError``: scripts and logs key on its ``rawValue``.
  public struct Code: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The code as scripts see it, in `snake_case` (for example `"too_large"`).
    public let rawValue: String

    /// Wraps a code string; prefer the static members.
    public init(rawValue: String) { self.rawValue = rawValue }

    /// The code string itself.
    public var description: String { rawValue }
  }

  /// What went wrong, as a stable code.
  public let code: Code
  /// A one-sentence explanation for people; it never contains URL credentials.
  public let message: String
  /// The HTTP status of the final response, for ``Code/httpStatus`` (and wherever it is known).
  public var httpStatus: Int?
  /// What the bytes really are (a MIME type such as `"image/webp"`), for refused content.
  public var detected: String?
  /// Whether the bytes were refused as an attachment (wrong type, too large, too long, too
  /// many pixels, cut short, empty), as opposed to the fetch itself failing.
  public var isRejection: Bool

  /// Makes an error with a code and a message for people.
  public init(_ code: Code, _ message: String, httpStatus: Int? = nil, detected: String? = nil) {
    self.code = code
    self.message = message
    self.httpStatus = httpStatus
    self.detected = detected
    self.isRejection = [
      .unsupportedType, .unsupportedCodec, .tooLong, .unknownDuration, .tooManyPixels, .tooLarge, .empty,
    ].contains(code)
  }

  /// `code: message`, fit for a log line.
  public var description: String { "\(code.rawValue): \(message)" }
}

extension AttachmentError.Code {
  // Fetch
  /// The URL could not be parsed, or has no host.
  public static let invalidURL = Self(rawValue: "invalid_url")
  /// The URL (or a redirect) uses a scheme other than `http` or `https`.
  public static let unsupportedScheme = Self(rawValue: "unsupported_scheme")
  /// The host name could not be resolved.
  public static let dnsFailed = Self(rawValue: "dns_failed")
  /// No connection could be made (refused, unreachable, or the connect timeout passed).
  public static let connectFailed = Self(rawValue: "connect_failed")
  /// The URL (or a redirect, or its DNS answer) leads to a loopback, private or link-local
  /// address and private networks are not allowed.
  public static let blockedAddress = Self(rawValue: "blocked_address")
  /// The TLS handshake failed, including an untrusted or invalid certificate.
  public static let tlsFailed = Self(rawValue: "tls_failed")
  /// The final response had a status that is not a success (see ``AttachmentError/httpStatus``).
  public static let httpStatus = Self(rawValue: "http_status")
  /// More redirects than the configured maximum.
  public static let tooManyRedirects = Self(rawValue: "too_many_redirects")
  /// The absolute deadline passed before the work finished.
  public static let deadlineExceeded = Self(rawValue: "deadline_exceeded")
  /// The transfer stayed below the configured low-speed limit for the whole window.
  public static let tooSlow = Self(rawValue: "too_slow")
  /// The body is (or declared itself) larger than the limit.
  public static let tooLarge = Self(rawValue: "too_large")
  /// The response headers exceeded the configured cap.
  public static let headersTooLarge = Self(rawValue: "headers_too_large")
  /// The connection closed before the declared length arrived, or the file's structure is cut short.
  public static let truncated = Self(rawValue: "truncated")
  /// The body was empty.
  public static let empty = Self(rawValue: "empty")
  /// Reading or writing a local file failed (disk full, permissions, a missing directory).
  public static let ioError = Self(rawValue: "io_error")
  /// The caller's task was cancelled.
  public static let cancelled = Self(rawValue: "cancelled")
  /// The configuration cannot be used as given (for example a proxy with the private-network
  /// guard on, without accepting what the guard cannot check through it).
  public static let invalidConfiguration = Self(rawValue: "invalid_configuration")
  /// The peer answered with something that is not valid HTTP, or the transfer failed in a way
  /// no other code describes.
  public static let networkError = Self(rawValue: "network_error")

  // Validation
  /// The bytes are not a type the product accepts (see ``AttachmentError/detected``).
  public static let unsupportedType = Self(rawValue: "unsupported_type")
  /// The container is accepted but iOS decodes none of its video tracks (for a video) or
  /// audio tracks (for audio); ``AttachmentError/detected`` names the codec as a MIME type
  /// with `codecs`, e.g. `audio/mp4; codecs="dtsc"`.
  public static let unsupportedCodec = Self(rawValue: "unsupported_codec")
  /// A video lasts longer than the configured maximum.
  public static let tooLong = Self(rawValue: "too_long")
  /// A video's duration cannot be established from its container, its tracks, its time
  /// stamps or its bit rate, so the length limit cannot be checked.
  public static let unknownDuration = Self(rawValue: "unknown_duration")
  /// An image's decoded size (width × height × 4 bytes) exceeds the configured ceiling.
  public static let tooManyPixels = Self(rawValue: "too_many_pixels")
}

extension AttachmentError {
  /// The task was cancelled: a convenience used throughout the library.
  static func cancelledError() -> AttachmentError {
    AttachmentError(.cancelled, "The request was cancelled.")
  }
}
