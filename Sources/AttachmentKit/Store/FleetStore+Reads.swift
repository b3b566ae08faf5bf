import Glibc

/// Reading a key from the store (``SharedTier/read(_:into:maximumBytes:budget:)``): its record,
/// then its content, both within one budget, the content verified against the record before
/// anything is used.
extension FleetStore {
  /// How long looking in the store may take for a request with `remaining` time left:
  /// ``StoreConfiguration/readShare`` of it, at most ``StoreConfiguration/maximumReadSeconds``.
  func readBudget(remaining: Duration) -> Duration {
    Self.readBudget(
      remaining: remaining, share: configuration.readShare, maximumSeconds: configuration.maximumReadSeconds)
  }

  /// `share` of `remaining`, at most `maximumSeconds`: the time a shared tier may be read for
  /// (the defaults, a quarter and 3 s, for a ``PipelineConfiguration/sharedTier``).
  static func readBudget(
    remaining: Duration, share: Double = StoreConfiguration.defaultReadShare,
    maximumSeconds: Double = StoreConfiguration.defaultMaximumReadSeconds
  ) -> Duration {
    min(remaining * max(0, min(1, share)), .milliseconds(Int64(maximumSeconds * 1000)))
  }

  /// The record and verified content of `key`, or why not (each counted, failures logged),
  /// taking at most `budget`; `maximumBytes`: the largest content this pipeline would accept.
  /// `missing` is the fleet's first miss of the key; `failed`, a store that failed, ran out of
  /// the budget, or held a corrupt object.
  func read(_ key: TierKey, into destination: Int32, maximumBytes: Int64, budget: Duration) -> TierRead {
    switch readFound(key.key, budget: budget, maximumBytes: maximumBytes, into: destination) {
    case .success(let record?): return .found(TierEntry(record))
    case .success(nil): return .missing
    case .failure: return .failed
    }
  }

  /// Why a read found nothing usable (other than a missing object).
  struct Unusable: Error {}

  private func readFound(
    _ key: URLKey, budget: Duration, maximumBytes: Int64, into descriptor: Int32
  ) -> Result<CacheRecord?, Unusable> {
    let end = ContinuousClock.now + budget
    guard let recordName = Self.recordName(for: key) else { return .failure(Unusable()) }
    let response = client.get(
      configuration.key(recordName), maximumBytes: Self.recordObjectLimit, timeout: budget)
    let object: [UInt8]
    switch body(of: response, what: "the record of a key") {
    case .success(let bytes?): object = bytes
    case .success(nil): return .success(nil)
    case .failure(let unusable): return .failure(unusable)
    }
    guard let split = Self.splitRecordObject(object),
      let record = Self.record(Array(split.text), key: key, maximumBytes: maximumBytes)
    else {
      count { $0.corrupt += 1 }
      log("a record that does not parse or names another key: \(recordName) (a miss)")
      return .failure(Unusable())
    }
    if let inline = split.inline {
      return readInline(inline, of: record, recordName: recordName, into: descriptor)
    }
    let name = Self.contentName(
      sha256: record.validation.sha256, fileExtension: record.validation.fileExtension)
    let left = end - ContinuousClock.now
    guard left > .zero else {
      count { $0.readFailures += 1 }
      log("out of its share of the deadline before the content was read (a miss)")
      return .failure(Unusable())
    }
    // Streamed into the caller's file and hashed as it arrives: constant memory, whatever the
    // file's size.
    let content = client.download(
      configuration.key(name), into: descriptor, maximumBytes: record.validation.bytes, timeout: left)
    if content.failure != nil, content.status == 200 {
      // Longer than its record says: substituted.
      markCorrupt(name)
      log("content \(name) is longer than its record's \(record.validation.bytes) bytes: not served")
      return .failure(Unusable())
    }
    switch body(of: content, what: "content \(name)") {
    case .success(.some): break
    case .success(nil): return .success(nil)
    case .failure(let unusable): return .failure(unusable)
    }
    guard content.bytesReceived == record.validation.bytes, content.sha256 == record.validation.sha256 else {
      markCorrupt(name)
      log("content \(name) does not match its SHA-256 (\(content.bytesReceived) bytes): not served")
      return .failure(Unusable())
    }
    count { $0.hits += 1 }
    return .success(record)
  }

  /// A record object's inline content, checked against `record` and written to `descriptor`.
  private func readInline(
    _ inline: ArraySlice<UInt8>, of record: CacheRecord, recordName: String, into descriptor: Int32
  ) -> Result<CacheRecord?, Unusable> {
    guard Int64(inline.count) == record.validation.bytes,
      Self.sha256(Array(inline)) == record.validation.sha256
    else {
      count { $0.corrupt += 1 }
      log(
        "the content inline in \(recordName) does not match its SHA-256 (\(inline.count) bytes): not served")
      return .failure(Unusable())
    }
    var done = inline.startIndex
    while done < inline.endIndex {
      let wrote = inline[done...].withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress, $0.count) }
      if wrote < 0 && errno == EINTR { continue }
      guard wrote > 0 else {
        count { $0.readFailures += 1 }
        log("the local file for \(recordName) could not be written")
        return .failure(Unusable())
      }
      done += wrote
    }
    count { $0.hits += 1 }
    return .success(record)
  }

  /// The record `bytes` hold when it parses, answers `key`, names content by a SHA-256 with a
  /// plain extension and is not over `maximumBytes`; else `nil`.
  static func record(_ bytes: [UInt8], key: URLKey, maximumBytes: Int64) -> CacheRecord? {
    guard let record = TierEntry.record(bytes, key: key), record.validation.bytes <= maximumBytes else {
      return nil
    }
    return record
  }

  /// The body of a `200`; `nil` for a missing object, counted as a miss (`404`, or `403`
  /// `AccessDenied`, which AWS answers for a missing key to a role without `s3:ListBucket`); a
  /// failure for anything else (no answer, another status), counted and logged.
  private func body(of response: StoreResponse, what: String) -> Result<[UInt8]?, Unusable> {
    if response.status == 200, response.failure == nil { return .success(response.body) }
    if response.status == 404 || (response.status == 403 && response.errorCode == "AccessDenied") {
      count { $0.misses += 1 }
      return .success(nil)
    }
    count { $0.readFailures += 1 }
    let why = response.failure ?? "status \(response.status) \(response.errorCode ?? "")"
    log("reading \(what) failed: \(why) (the request goes on without the store)")
    return .failure(Unusable())
  }
}
