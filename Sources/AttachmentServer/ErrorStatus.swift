import AttachmentKit

/// The HTTP status each stable error code is answered with.
enum ErrorStatus {
  /// `400` malformed request or URL, `403` signature or address refused, `404`, `405`, `422`
  /// the file refused, `502` upstream failed, `503` overloaded, `504` deadline, `500` otherwise.
  static func of(_ code: AttachmentError.Code) -> Int {
    switch code {
    case .badRequest, .invalidURL, .unsupportedScheme: 400
    case .badSignature, .blockedAddress: 403
    case .notFound: 404
    case .methodNotAllowed: 405
    case .unsupportedType, .unsupportedCodec, .tooLarge, .tooLong, .unknownDuration, .tooManyPixels, .empty:
      422
    case .httpStatus, .connectFailed, .dnsFailed, .tlsFailed, .truncated, .tooManyRedirects, .tooSlow,
      .networkError, .headersTooLarge:
      502
    case .overloaded: 503
    case .deadlineExceeded: 504
    default: 500
    }
  }
}
