import TestTraits
import Testing

@testable import AttachmentKit

/// A sweep's decisions as a value: what it read in, the removals out, with no file touched.
/// (`CacheMaintenanceTests`, `CrashConsistencyTests` and `SharedCacheTests` apply real plans.)
@Suite("The sweep plan", .cpuBound)
struct SweepPlanTests {
  static let layout = CacheLayout(root: "/c")

  /// A record of `bytes` bytes of content named by `fill` (a hex digit), last used at `access`.
  static func record(_ fill: Character, bytes: Int64, access: Double) -> (String, [UInt8], CacheRecord) {
    let validation = Validation(
      type: .jpeg, detectedMIME: nil, bytes: bytes, sha256: String(repeating: fill, count: 64), width: 1,
      height: 1, frames: nil, durationSeconds: nil, warnings: [])
    let record = CacheRecord(
      url: "http://x/\(fill)-\(access)", validation: validation, peer: .public, etag: nil, lastModified: nil,
      date: nil, fetchedAt: 0, freshUntil: 1, lastAccess: access)
    return ("d\(fill)\(Int(access))", Array(record.encoded().utf8), record)
  }

  static func path(_ fill: Character) -> String {
    layout.contentPath(sha256: String(repeating: fill, count: 64), fileExtension: "jpg")
  }

  static func plan(_ scan: SweepPlan.Scan, limit: Int64? = nil) -> SweepPlan {
    SweepPlan(scan: scan, layout: layout, limit: limit, lowWatermark: 0.8, gracePeriod: 300)
  }

  @Test("damage is removed and counted; strays wait an hour; a missing shard is made, not counted")
  func damage() {
    var scan = SweepPlan.Scan()
    scan.legacyRoots = ["/c/v1"]
    scan.unsafeShards = [("/c/v2/index/3", true), ("/c/v2/content/a", false)]
    scan.unreadable = [("dbad", .damaged)]
    scan.damagedContent = ["/c/v2/content/b/link.jpg"]
    scan.strayContent = ["/c/v2/content/c/note.txt"]
    let plan = Self.plan(scan)
    #expect(
      plan.steps == [
        .removeTree("/c/v1"), .repairShard("/c/v2/index/3"), .repairShard("/c/v2/content/a"),
        .removeRecord(digest: "dbad", ifStill: .damaged),
        .removeContent(path: "/c/v2/content/b/link.jpg", grace: nil, sha256: nil, countedBytes: 0),
        .removeContent(path: "/c/v2/content/c/note.txt", grace: 3_600, sha256: nil, countedBytes: 0),
      ])
    #expect(plan.corrupt == 3)  // the unsafe shard, the record, the content (not the missing shard)
    #expect(plan.entries == 0 && plan.bytes == 0)
  }

  @Test("a record whose content is missing or of another size goes; content no record uses waits its grace")
  func orphans() {
    var scan = SweepPlan.Scan()
    let healthy = Self.record("1", bytes: 100, access: 1)
    let wrongSize = Self.record("2", bytes: 100, access: 1)
    let missing = Self.record("3", bytes: 100, access: 1)
    scan.records = [healthy, wrongSize, missing].map { (digest: $0.0, bytes: $0.1, record: $0.2) }
    scan.content = [Self.path("1"): 100, Self.path("2"): 99, Self.path("9"): 40]
    let plan = Self.plan(scan)
    #expect(
      Array(plan.steps.prefix(2)) == [
        .removeRecord(digest: wrongSize.0, ifStill: .bytes(wrongSize.1)),
        .removeRecord(digest: missing.0, ifStill: .bytes(missing.1)),
      ])
    // (unused content in any order)
    #expect(plan.steps.count == 4)
    for unused in [
      SweepPlan.Step.removeContent(path: Self.path("2"), grace: 300, sha256: nil, countedBytes: 99),
      .removeContent(path: Self.path("9"), grace: 300, sha256: nil, countedBytes: 40),
    ] {
      #expect(plan.steps.dropFirst(2).contains(unused))
    }
    #expect(plan.corrupt == 2)
    #expect(plan.entries == 1 && plan.contentFiles == 1 && plan.bytes == 100)
  }

  @Test(
    "over the limit: least recently used first, down to the low watermark; shared content goes with its last user"
  )
  func eviction() {
    var scan = SweepPlan.Scan()
    // Four entries of 100 bytes; two of them share content "b". Used content: 300 bytes.
    let oldest = Self.record("a", bytes: 100, access: 1)
    let sharedOld = Self.record("b", bytes: 100, access: 2)
    let sharedNew = Self.record("b", bytes: 100, access: 5)
    let newest = Self.record("c", bytes: 100, access: 9)
    scan.records = [newest, sharedNew, oldest, sharedOld].map { (digest: $0.0, bytes: $0.1, record: $0.2) }
    scan.content = [Self.path("a"): 100, Self.path("b"): 100, Self.path("c"): 100]

    // A limit of 250 (target 200): the oldest goes with its content; the shared one's first
    // user goes without it (its newer user keeps it), and 200 bytes are then reached
    let plan = Self.plan(scan, limit: 250)
    #expect(
      plan.steps == [
        .evict(
          digest: oldest.0, bytes: oldest.1, path: Self.path("a"), removingContent: true, countedBytes: 100)
      ])
    #expect(plan.evicted == 1 && plan.entries == 3 && plan.contentFiles == 2 && plan.bytes == 200)

    // A limit of 150 (target 120): the shared content goes only with its second user
    let tight = Self.plan(scan, limit: 150)
    #expect(
      tight.steps == [
        .evict(
          digest: oldest.0, bytes: oldest.1, path: Self.path("a"), removingContent: true, countedBytes: 100),
        .evict(
          digest: sharedOld.0, bytes: sharedOld.1, path: Self.path("b"), removingContent: false,
          countedBytes: 100),
        .evict(
          digest: sharedNew.0, bytes: sharedNew.1, path: Self.path("b"), removingContent: true,
          countedBytes: 100),
      ])
    #expect(tight.evicted == 3 && tight.entries == 1 && tight.bytes == 100)
    // Under the limit nothing is evicted
    #expect(Self.plan(scan, limit: 300).steps.isEmpty)
  }

  @Test("a rehash removes a record whose content hashes wrong, and that content re-checked, never as unused")
  func rehash() {
    var scan = SweepPlan.Scan()
    let good = Self.record("1", bytes: 100, access: 1)
    let bad = Self.record("2", bytes: 100, access: 1)
    scan.records = [good, bad].map { (digest: $0.0, bytes: $0.1, record: $0.2) }
    scan.content = [Self.path("1"): 100, Self.path("2"): 100]
    scan.hashMatches = [Self.path("1"): true, Self.path("2"): false]
    let plan = Self.plan(scan)
    #expect(
      plan.steps == [
        .removeRecord(digest: bad.0, ifStill: .bytes(bad.1)),
        .removeContent(
          path: Self.path("2"), grace: nil, sha256: String(repeating: "2", count: 64), countedBytes: 100),
      ])
    #expect(plan.corrupt == 1 && plan.entries == 1)
  }
}
