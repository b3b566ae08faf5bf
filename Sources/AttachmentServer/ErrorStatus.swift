import AttachmentKit

/// The HTTP status each error is answered with, read from its kind
/// (``AttachmentError/Kind``) and, within a kind, from the few codes that differ.
enum ErrorStatus {
  /// `400` a malformed request or URL, `403` a signature, sealed URL, address or origin refused, `404`,
  /// `405`, `410` an expired signed path,
  /// `503` overloaded (the proxy's own refusals); `422` the file refused; `502` the upstream
  /// failed, `504` its deadline passed, `403` the origin refused this URL's credentials (`401`
  /// or `403`: a forged or foreign presigned URL whose hit the origin did not confirm is this
  /// caller's refusal, not the upstream failing); `500` this machine failed.
  static func of(_ error: AttachmentError) -> Int {
    switch error.kind {
    case .request: error.code == .blockedAddress || error.code == .originNotAllowed ? 403 : 400
    case .proxy: proxyStatus(error.code)
    case .rejection: 422
    case .fetch: fetchStatus(error)
    case .local: 500
    }
  }

  private static func fetchStatus(_ error: AttachmentError) -> Int {
    if error.code == .deadlineExceeded { return 504 }
    if error.code == .httpStatus, let status = error.httpStatus, status == 401 || status == 403 { return 403 }
    return 502
  }

  private static func proxyStatus(_ code: AttachmentError.Code) -> Int {
    switch code {
    case .badSignature, .badEncryptedURL: 403
    case .signatureExpired: 410
    case .notFound: 404
    case .methodNotAllowed: 405
    case .overloaded: 503
    default: 400
    }
  }
}
