import AttachmentKit

/// The object store tier's counters (`--store`) in the Prometheus text exposition, empty
/// without a store.
enum StoreMetrics {
  /// The `attachkit_store_*` counters of `counters`, or nothing when there is no store.
  static func text(_ counters: StoreCounters?) -> String {
    guard let counters else { return "" }
    let rows: [(String, String, Int)] = [
      (
        "attachkit_store_hits_total", "Local misses answered from the object store, content verified.",
        counters.hits
      ),
      (
        "attachkit_store_misses_total", "Lookups the object store had no usable record or content for.",
        counters.misses
      ),
      (
        "attachkit_store_read_failures_total",
        "Store lookups that failed or ran out of their share of the deadline; the request went on without the store.",
        counters.readFailures
      ),
      (
        "attachkit_store_corrupt_total",
        "Store objects whose bytes did not match their record's SHA-256 or size, or records that did not parse: never served.",
        counters.corrupt
      ),
      (
        "attachkit_store_writes_total", "Entries written to the store (content, then record).",
        counters.writes
      ),
      ("attachkit_store_write_failures_total", "Store write attempts that failed.", counters.writeFailures),
      (
        "attachkit_store_writes_dropped_total",
        "Store writes given up after every attempt, or when too many waited.",
        counters.writesDropped
      ),
      (
        "attachkit_store_leases_taken_total", "Leases this instance took: misses it did for the fleet.",
        counters.leasesTaken
      ),
      (
        "attachkit_store_lease_waits_total",
        "Misses that waited for another instance's lease instead of doing the work.",
        counters.leaseWaits
      ),
      (
        "attachkit_store_lease_waits_answered_total", "Lease waits answered by the holder's record.",
        counters.leaseWaitsAnswered
      ),
    ]
    return rows.map { Metrics.counter($0.0, $0.1, $0.2) }.joined()
  }
}
