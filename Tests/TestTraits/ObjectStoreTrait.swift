// Compiled only where Swift Testing is (a test build): see Skips.swift.
#if canImport(Testing)
  import Glibc
  import Testing

  extension Trait where Self == ConditionTrait {
    /// For the suites that start a SeaweedFS: they run in `scripts/test.sh --no-parallel` (CI's
    /// serial pass, `ATTACHKIT_TEST_PASS=serial`), not in a parallel run (`scripts/test.sh`'s or a
    /// plain `swift test`), where a Go object store beside every other suite
    /// starved a two-core machine and unrelated timing tests failed (a 30 s deadline passing, a
    /// 1 s idle timeout, a fault's deadline). Skipped there with a `SKIPPED:` line.
    public static func objectStore(_ name: String) -> Self {
      .requires(
        getenv("ATTACHKIT_TEST_PASS").map { String(cString: $0) } == "serial", name,
        "a SeaweedFS suite: run in the serial pass (scripts/test.sh --no-parallel), not beside every other suite"
      )
    }
  }
#endif
