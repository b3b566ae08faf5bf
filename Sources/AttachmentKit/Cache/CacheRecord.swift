/// One index record: what the cache knows about a URL. Committing it is what makes an entry
/// visible; it points at immutable content by SHA-256.
///
/// Stored as short `key value` lines (fast to parse on the hit path, readable with `cat`).
struct CacheRecord: Equatable, Sendable {
  /// The normalized URL this record answers.
  var url: String
  /// The validation result of the content (type, size, hash, dimensions, warnings).
  var validation: Validation
  /// Validators for revalidation.
  var etag: String?
  /// The `Last-Modified` header, for `If-Modified-Since`.
  var lastModified: String?
  /// The `Date` header of the response.
  var date: String?
  /// When the content was fetched or last revalidated, in seconds since 1970.
  var fetchedAt: Double
  /// Until when the entry is fresh, in seconds since 1970.
  var freshUntil: Double
  /// The last time a caller used the entry, in seconds since 1970 (the LRU clock).
  var lastAccess: Double

  /// The record's text.
  func encoded() -> String {
    var lines = ["v 1", "url \(url)", "sha256 \(validation.sha256)", "bytes \(validation.bytes)"]
    lines.append("type \(validation.type.rawValue)")
    if let mime = validation.detectedMIME { lines.append("mime \(mime)") }
    if let width = validation.width { lines.append("width \(width)") }
    if let height = validation.height { lines.append("height \(height)") }
    if let frames = validation.frames { lines.append("frames \(frames)") }
    if let duration = validation.durationSeconds { lines.append("duration \(duration)") }
    for codec in validation.codecs { lines.append("codec \(codec)") }
    for warning in validation.warnings { lines.append("warning \(warning)") }
    if let etag { lines.append("etag \(etag)") }
    if let lastModified { lines.append("lastmod \(lastModified)") }
    if let date { lines.append("date \(date)") }
    lines.append("fetched \(fetchedAt)")
    lines.append("fresh \(freshUntil)")
    lines.append("access \(lastAccess)")
    return lines.map(Self.singleLine).joined(separator: "\n") + "\n"
  }

  /// Parses a record, or returns `nil` for anything malformed (a torn or foreign file is a
  /// miss, never a crash).
  init?(decoding text: Substring) {
    var fields: [Substring: Substring] = [:]
    var warnings: [String] = []
    var codecs: [String] = []
    for line in text.split(separator: "\n") {
      guard let space = line.firstIndex(of: " ") else { return nil }
      let key = line[..<space]
      let value = line[line.index(after: space)...]
      if key == "warning" {
        warnings.append(String(value))
      } else if key == "codec" {
        codecs.append(String(value))
      } else {
        fields[key] = value
      }
    }
    guard fields["v"] == "1", let url = fields["url"], let sha = fields["sha256"], sha.count == 64,
      let bytes = fields["bytes"].flatMap({ Int64($0) }), bytes > 0,
      let type = fields["type"].flatMap({ MediaType(rawValue: String($0)) }),
      let fetched = fields["fetched"].flatMap({ Double($0) }),
      let fresh = fields["fresh"].flatMap({ Double($0) }),
      let access = fields["access"].flatMap({ Double($0) })
    else { return nil }
    self.url = String(url)
    validation = Validation(
      type: type, detectedMIME: fields["mime"].map(String.init), bytes: bytes, sha256: String(sha),
      width: fields["width"].flatMap { Int($0) }, height: fields["height"].flatMap { Int($0) },
      frames: fields["frames"].flatMap { Int($0) },
      durationSeconds: fields["duration"].flatMap { Double($0) }, codecs: codecs,
      warnings: warnings)
    etag = fields["etag"].map(String.init)
    lastModified = fields["lastmod"].map(String.init)
    date = fields["date"].map(String.init)
    fetchedAt = fetched
    freshUntil = fresh
    lastAccess = access
  }

  /// Makes a record.
  init(
    url: String, validation: Validation, etag: String?, lastModified: String?, date: String?,
    fetchedAt: Double, freshUntil: Double, lastAccess: Double
  ) {
    self.url = url
    self.validation = validation
    self.etag = etag
    self.lastModified = lastModified
    self.date = date
    self.fetchedAt = fetchedAt
    self.freshUntil = freshUntil
    self.lastAccess = lastAccess
  }

  private static func singleLine(_ text: String) -> String {
    guard text.contains(where: { $0 == "\n" || $0 == "\r" }) else { return text }
    return String(text.map { $0 == "\n" || $0 == "\r" ? " " : $0 })
  }
}
