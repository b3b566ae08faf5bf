import AttachmentKit

/// The key of the server's own per-URL state (fetch admission, the hit memo): the normalized
/// URL's UTF-8 bytes, the same bytes the cache keys its records by.
///
/// Never a `String`: Swift compares strings by canonical equivalence, so `…/café.jpg` spelled
/// with a combining accent (NFD) and with `é` (NFC) are equal `String`s, while the cache, the
/// origin and a CDN keep them apart. Keyed by `String`, one spelling's answer was served for the
/// other.
struct URLBytes: Hashable, Sendable {
  /// The normalized URL's UTF-8 bytes.
  let bytes: [UInt8]

  /// The key of `url` (``AttachmentURL/normalized``).
  init(_ url: AttachmentURL) {
    bytes = Array(url.normalized.utf8)
  }
}
