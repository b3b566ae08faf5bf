// Compiled only where Swift Testing is (a test build): see Skips.swift.
#if canImport(Testing)
  import Glibc
  import Testing

  extension Trait where Self == ConditionTrait {
    /// For the suites that start a SeaweedFS: they run in a plain `swift test` and in
    /// `scripts/test.sh --no-parallel` (CI's serial pass), not in `scripts/test.sh`'s parallel
    /// pass (`ATTACHKIT_TEST_PASS=parallel`), where a Go object store beside every other suite
    /// starved a two-core machine and unrelated timing tests failed (a 30 s deadline passing, a
    /// 1 s idle timeout, a fault's deadline). Skipped there with a `SKIPPED:` line.
    public static func objectStore(_ name: String) -> Self {
      .requires(
        getenv("ATTACHKIT_TEST_PASS").map { String(cString: $0) } != "parallel", name,
        "a SeaweedFS suite: run in the serial pass (scripts/test.sh --no-parallel), not beside every other suite"
      )
    }
  }
#endif
