/// What a pipeline's object store tier (``StoreConfiguration``) did since the process started:
/// ``AttachmentPipeline/storeCounters`` (serve's `/metrics` shows them as `attachkit_store_*`).
public struct StoreCounters: Sendable, Equatable {
  /// Misses of the local cache answered from the store (its content verified).
  public var hits = 0
  /// Lookups the store had no usable record or content for (the origin was asked).
  public var misses = 0
  /// Lookups that failed or ran out of their share of the deadline (down, slow, refusing): the
  /// request went on without the store.
  public var readFailures = 0
  /// Objects whose bytes did not match their record's SHA-256 or size (changed, truncated,
  /// substituted), or records that did not parse or name another key: never served, and
  /// replaced by the next write of that key.
  public var corrupt = 0
  /// Background writes of a key (content, then record) that reached the store.
  public var writes = 0
  /// Background write attempts that failed (each is retried up to
  /// ``StoreConfiguration/writeAttempts`` times).
  public var writeFailures = 0
  /// Background writes given up: every attempt failed, or too many were waiting.
  public var writesDropped = 0

  /// Leases this instance took (new, or taken over after they expired): misses it did for the
  /// fleet.
  public var leasesTaken = 0
  /// Misses that found another instance's lease and waited for its record instead of doing the
  /// work again.
  public var leaseWaits = 0
  /// Of those, the waits that ended with the record (answered from the store).
  public var leaseWaitsAnswered = 0

  /// No event yet.
  public init() {}
}
