/// One index record: what the cache knows about a URL. Committing it is what makes an entry
/// visible; it points at immutable content by SHA-256.
///
/// It keeps the facts a caller's policy is judged on (category by type, bytes, duration,
/// pixels, and the class of the address the download came from); the pipeline judges them,
/// the cache only stores them. Stored as short `key value` lines (fast to parse on the hit
/// path, readable with `cat`).
struct CacheRecord: Equatable, Sendable {
  /// The record format this code writes and reads (`v` line).
  static let version = "2"
  /// The format of a record whose content is a rescued derivative. Binaries from before rescue
  /// read only ``version``, so to them such a record is unreadable (a miss) instead of an
  /// original they would serve to a caller that never asked for a rescue.
  static let rescuedVersion = "2r"

  /// The normalized URL this record answers: its cache key.
  var url: String
  /// The last URL the content was fetched or revalidated with, when the key left query
  /// parameters out of it (``CacheKeyRules``); `nil` when ``url`` is that URL.
  var source: String?
  /// The validation result of the content (type, size, hash, dimensions, warnings).
  var validation: Validation
  /// The class of the peer address the content was downloaded from (`nil`: libcurl did not
  /// say, and the caller accepted private networks).
  var peer: PeerAddressClass?
  /// Validators for revalidation.
  var etag: String?
  /// The `Last-Modified` header, for `If-Modified-Since`.
  var lastModified: String?
  /// The `Date` header of the response.
  var date: String?
  /// The origin's `Cache-Control` (after a `304`, the one it sent, else the stored one), so a
  /// revalidation keeps the origin's lifetime and a proxy can pass `private`, `no-cache` and
  /// `s-maxage` on.
  var cacheControl: String?
  /// The origin's `Expires`, kept for the same reason as ``cacheControl``.
  var expires: String?
  /// When the content was fetched or last revalidated, in seconds since 1970.
  var fetchedAt: Double
  /// Until when the entry is fresh, in seconds since 1970.
  var freshUntil: Double
  /// The last time a caller used the entry, in seconds since 1970 (the LRU clock).
  var lastAccess: Double
  /// The content file's inode and change time when the record was written (`nil`: a record
  /// from before seals, checked by hashing on its next hit).
  var seal: ContentSeal?

  /// The record's text.
  func encoded() -> String {
    var lines = ["v \(validation.rescued == nil ? Self.version : Self.rescuedVersion)", "url \(url)"]
    lines += Self.validationLines(validation)
    if let peer { lines.append("peer \(peer.rawValue)") }
    if let etag { lines.append("etag \(etag)") }
    if let lastModified { lines.append("lastmod \(lastModified)") }
    if let date { lines.append("date \(date)") }
    if let cacheControl { lines.append("cc \(cacheControl)") }
    if let expires { lines.append("expires \(expires)") }
    lines.append("fetched \(fetchedAt)")
    lines.append("fresh \(freshUntil)")
    lines.append("access \(lastAccess)")
    if let source { lines.append("src \(source)") }
    if let seal { lines.append("\(Self.sealKey) \(seal.recorded)") }
    return lines.map(Self.singleLine).joined(separator: "\n") + "\n"
  }

  /// Parses a record, or returns `nil` for anything malformed (a torn or foreign file is a
  /// miss, never a crash).
  init?(decoding text: Substring) {
    guard let lines = RecordLines(text), let version = lines.single["v"],
      version == Self.version[...] || version == Self.rescuedVersion[...],
      let url = lines.single["url"], let validation = Self.validation(from: lines),
      (validation.rescued != nil) == (version == Self.rescuedVersion[...]),
      let fetched = lines.single["fetched"].flatMap({ Double($0) }),
      let fresh = lines.single["fresh"].flatMap({ Double($0) }),
      let access = lines.single["access"].flatMap({ Double($0) })
    else { return nil }
    self.url = String(url)
    self.validation = validation
    if let text = lines.single["peer"] {
      guard let peer = PeerAddressClass(rawValue: String(text)) else { return nil }
      self.peer = peer
    } else {
      peer = nil
    }
    etag = lines.single["etag"].map(String.init)
    lastModified = lines.single["lastmod"].map(String.init)
    date = lines.single["date"].map(String.init)
    cacheControl = lines.single["cc"].map(String.init)
    expires = lines.single["expires"].map(String.init)
    source = lines.single["src"].map(String.init)
    fetchedAt = fetched
    freshUntil = fresh
    lastAccess = access
    if let text = lines.single[Self.sealKey[...]] {
      guard let seal = ContentSeal(recorded: text) else { return nil }
      self.seal = seal
    }
  }

  /// The key of the ``seal`` line. A prepared record gets it appended under the lock, once the
  /// content is in place (``AttachmentCache/publish``).
  static let sealKey = "seal"

  /// Makes a record.
  init(
    url: String, validation: Validation, peer: PeerAddressClass?, etag: String?, lastModified: String?,
    date: String?, fetchedAt: Double, freshUntil: Double, lastAccess: Double, seal: ContentSeal? = nil,
    cacheControl: String? = nil, expires: String? = nil, source: String? = nil
  ) {
    self.url = url
    self.source = source
    self.validation = validation
    self.peer = peer
    self.etag = etag
    self.lastModified = lastModified
    self.date = date
    self.fetchedAt = fetchedAt
    self.freshUntil = freshUntil
    self.lastAccess = lastAccess
    self.seal = seal
    self.cacheControl = cacheControl
    self.expires = expires
  }

  // MARK: - The validation round trip (one place to add a field)

  /// The lines of a validation result. A new `Validation` field gets a line here and a read
  /// in ``validation(from:)``; repeated values use ``RecordLines/repeatedKeys``.
  static func validationLines(_ validation: Validation) -> [String] {
    var lines = [
      "sha256 \(validation.sha256)", "bytes \(validation.bytes)", "type \(validation.type.rawValue)",
    ]
    if let mime = validation.detectedMIME { lines.append("mime \(mime)") }
    if let width = validation.width { lines.append("width \(width)") }
    if let height = validation.height { lines.append("height \(height)") }
    if let frames = validation.frames { lines.append("frames \(frames)") }
    if let duration = validation.durationSeconds { lines.append("duration \(duration)") }
    for codec in validation.codecs { lines.append("codec \(codec)") }
    for warning in validation.warnings { lines.append("warning \(warning)") }
    if let rescued = validation.rescued { lines += rescueLines(rescued) }
    if let poster = validation.posterTimeSeconds { lines.append("poster-time \(poster)") }
    return lines
  }

  /// The validation result in parsed record lines, or `nil` when a field is malformed (a
  /// `sha256` must be 64 lower-case hex digits: it becomes a file name).
  static func validation(from lines: RecordLines) -> Validation? {
    guard let sha = lines.single["sha256"], isSHA256(sha),
      let bytes = lines.single["bytes"].flatMap({ Int64($0) }), bytes > 0,
      let type = lines.single["type"].flatMap({ MediaType(rawValue: String($0)) })
    else { return nil }
    func integer(_ key: Substring) -> Int?? {
      guard let text = lines.single[key] else { return .some(nil) }
      return Int(text).map { .some($0) } ?? nil
    }
    guard let width = integer("width"), let height = integer("height"), let frames = integer("frames") else {
      return nil
    }
    var duration: Double?
    if let text = lines.single["duration"] {
      guard let seconds = Double(text), seconds.isFinite, seconds >= 0 else { return nil }
      duration = seconds
    }
    // A record written before poster times has no line: `nil`, as for a validation without one.
    var posterTime: Double?
    if let text = lines.single["poster-time"] {
      guard let seconds = Double(text), seconds.isFinite, seconds >= 0 else { return nil }
      posterTime = seconds
    }
    var rescued: Rescue?
    if lines.single["rescued-by"] != nil {
      guard let parsed = rescue(from: lines) else { return nil }
      rescued = parsed
    } else if let text = lines.single["rescued"] {
      guard let parsed = rescue(fromPositional: text) else { return nil }
      rescued = parsed
    }
    return Validation(
      type: type, detectedMIME: lines.single["mime"].map(String.init), bytes: bytes, sha256: String(sha),
      width: width, height: height, frames: frames, durationSeconds: duration,
      codecs: lines.repeated["codec", default: []].map(String.init),
      warnings: lines.repeated["warning", default: []].map(String.init), rescued: rescued,
      posterTimeSeconds: posterTime)
  }

  // MARK: - A rescue's provenance (keyed lines, so any rescuer's facts fit)

  /// The `rescued-*` lines of a derivative's provenance: who made it, from what, what was
  /// done, and the facts of the source that are known.
  static func rescueLines(_ rescued: Rescue) -> [String] {
    var lines = [
      "rescued-by \(rescued.rescuer)", "rescued-from \(rescued.from)",
      "rescued-actions \(rescued.actions.map(\.rawValue).joined(separator: ","))",
      "rescued-bytes \(rescued.originalBytes)",
    ]
    if let width = rescued.originalWidth { lines.append("rescued-width \(width)") }
    if let height = rescued.originalHeight { lines.append("rescued-height \(height)") }
    if let duration = rescued.originalDurationSeconds { lines.append("rescued-duration \(duration)") }
    for codec in rescued.originalCodecs { lines.append("rescued-codec \(codec)") }
    if let type = rescued.originalType { lines.append("rescued-type \(type.rawValue)") }
    if let reason = rescued.originalReason { lines.append("rescued-reason \(reason.rawValue)") }
    return lines
  }

  /// The provenance in a record's `rescued-*` lines, or `nil` when one is malformed. A record
  /// from before the `rescued-type` and `rescued-reason` lines, or with a value this code does
  /// not know, has them read from `rescued-from` (``Rescue/inferOriginal()``).
  static func rescue(from lines: RecordLines) -> Rescue? {
    guard let rescuer = lines.single["rescued-by"], !rescuer.isEmpty, let from = lines.single["rescued-from"],
      let actions = lines.single["rescued-actions"].map(actions(from:)), !actions.isEmpty,
      let bytes = lines.single["rescued-bytes"].flatMap({ Int64($0) })
    else { return nil }
    func optional<Value>(_ key: Substring, _ parse: (Substring) -> Value?) -> Value?? {
      guard let text = lines.single[key] else { return .some(nil) }
      return parse(text).map { .some($0) } ?? nil
    }
    guard let width = optional("rescued-width", { Int($0) }),
      let height = optional("rescued-height", { Int($0) }),
      let duration = optional(
        "rescued-duration", { Double($0).flatMap { $0.isFinite && $0 >= 0 ? $0 : nil } })
    else { return nil }
    var rescue = Rescue(
      rescuer: String(rescuer), from: String(from), actions: actions, originalBytes: bytes,
      originalWidth: width,
      originalHeight: height, originalDurationSeconds: duration,
      originalCodecs: lines.repeated["rescued-codec", default: []].map(String.init))
    rescue.originalType = lines.single["rescued-type"].flatMap { MediaType(rawValue: String($0)) }
    rescue.originalReason = lines.single["rescued-reason"].flatMap { Refusal.Reason(rawValue: String($0)) }
    rescue.inferOriginal()
    return rescue
  }

  /// The value of a `rescued` line as the image rescuer wrote it before provenance had keyed
  /// lines (`from actions bytes width height`), or `nil` when malformed.
  static func rescue(fromPositional text: Substring) -> Rescue? {
    let fields = text.split(separator: " ")
    guard fields.count == 5, let bytes = Int64(fields[2]), let width = Int(fields[3]),
      let height = Int(fields[4])
    else { return nil }
    let actions = actions(from: fields[1])
    guard !actions.isEmpty else { return nil }
    var rescue = Rescue(
      rescuer: ImageRescuer.name, from: String(fields[0]), actions: actions, originalBytes: bytes,
      originalWidth: width, originalHeight: height)
    rescue.inferOriginal()
    return rescue
  }

  private static func actions(from text: Substring) -> [Rescue.Action] {
    text.split(separator: ",").map { Rescue.Action(rawValue: String($0)) }
  }

  /// Whether `text` is 64 lower-case hex digits.
  static func isSHA256(_ text: Substring) -> Bool {
    text.utf8.count == 64 && text.utf8.allSatisfy { (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }
  }

  private static func singleLine(_ text: String) -> String {
    guard text.contains(where: { $0 == "\n" || $0 == "\r" }) else { return text }
    return String(text.map { $0 == "\n" || $0 == "\r" ? " " : $0 })
  }
}

/// A record's `key value` lines: single-valued keys (the last one wins) and repeated ones.
struct RecordLines {
  /// Keys that may appear many times, each value kept in order.
  static let repeatedKeys: Set<Substring> = ["warning", "codec", "rescued-codec"]
  /// Single-valued keys.
  var single: [Substring: Substring] = [:]
  /// Repeated keys, values in order.
  var repeated: [Substring: [Substring]] = [:]

  /// Splits a record's text, or returns `nil` when a line has no space.
  init?(_ text: Substring) {
    for line in text.split(separator: "\n") {
      guard let space = line.firstIndex(of: " ") else { return nil }
      let key = line[..<space]
      let value = line[line.index(after: space)...]
      if Self.repeatedKeys.contains(key) {
        repeated[key, default: []].append(value)
      } else {
        single[key] = value
      }
    }
  }
}
