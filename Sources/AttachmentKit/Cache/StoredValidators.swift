/// What a record keeps of a response to revalidate it later: the cache's own value, so the
/// cache takes no HTTP type (``ResponseHeaders`` belongs to the fetch layer).
struct StoredValidators: Sendable, Equatable {
  /// The `ETag`, for `If-None-Match`.
  var etag: String?
  /// The `Last-Modified` date, for `If-Modified-Since`.
  var lastModified: String?
  /// The `Date` of the response.
  var date: String?
}

extension StoredValidators {
  /// The validators a response carries.
  init(_ headers: ResponseHeaders) {
    self.init(etag: headers.etag, lastModified: headers.lastModified, date: headers.date)
  }
}
