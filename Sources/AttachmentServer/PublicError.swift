import AttachmentKit

/// What the network is told about this machine: no file system path and no local error text.
///
/// An error of the local kind (`io_error`, `cancelled`, `invalid_configuration`) carries what
/// the file system or the configuration said, cache paths included; its answer keeps the code
/// and says only what failed. The info record drops `path` (where the cache keeps the file).
enum PublicError {
  /// `error` as the network sees it: the same code, status and `detected`, and for the local
  /// kind a fixed message instead of the local one.
  static func exposed(_ error: AttachmentError) -> AttachmentError {
    guard error.kind == .local else { return error }
    let message =
      if error.code == .cancelled {
        "The request was cancelled."
      } else if error.code == .invalidConfiguration {
        "The server is not configured to answer this."
      } else {
        "The server could not read or write its cache."
      }
    return AttachmentError(
      error.code, message, httpStatus: error.httpStatus, detected: error.detected, kind: error.kind)
  }

  /// `record` without its `path` field (at the top level, where the info record keeps it).
  static func withoutPath(_ record: JSON) -> JSON {
    guard case .object(let fields) = record else { return record }
    return .object(fields.filter { $0.key != "path" })
  }
}
