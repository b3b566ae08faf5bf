/// What a record keeps of a response to revalidate it later and to tell a proxy's clients
/// what the origin allowed: the cache's own value, so the cache takes no HTTP type
/// (``ResponseHeaders`` belongs to the fetch layer).
struct StoredValidators: Sendable, Equatable {
  /// The `ETag`, for `If-None-Match`.
  var etag: String?
  /// The `Last-Modified` date, for `If-Modified-Since`.
  var lastModified: String?
  /// The `Date` of the response.
  var date: String?
  /// The `Cache-Control` of the response.
  var cacheControl: String?
  /// The `Expires` of the response.
  var expires: String?
  /// The URL the response answered, when the cache key left query parameters out of it
  /// (``CacheKeyRules``); `nil` when the URL is the key. Not merged: a record keeps the last
  /// URL its content was fetched (or revalidated) with.
  var source: String? = nil

  /// These headers (a `304`'s) merged into the stored ones, as RFC 9111 §4.3.4 asks: each
  /// field the `304` sends replaces the stored one, the rest are kept.
  func merged(over record: CacheRecord) -> StoredValidators {
    StoredValidators(
      etag: etag ?? record.etag, lastModified: lastModified ?? record.lastModified, date: date ?? record.date,
      cacheControl: cacheControl ?? record.cacheControl, expires: expires ?? record.expires, source: source)
  }
}

extension StoredValidators {
  /// The validators a response to `url` carries.
  init(_ headers: ResponseHeaders, url: AttachmentURL) {
    self.init(
      etag: headers.etag, lastModified: headers.lastModified, date: headers.date,
      cacheControl: headers.cacheControl, expires: headers.expires,
      source: url.key.droppedParameters ? url.text : nil)
  }
}
