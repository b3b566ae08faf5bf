// Compiled only where Swift Testing is (a test build): a release build with the Swift runtime
// linked statically (`swift build -c release --static-swift-stdlib`) has no Testing module, and
// SwiftPM builds this target there too, so without the condition it would fail the whole build.
#if canImport(Testing)
  import Foundation
  import PosixLock
  import Testing

  /// Skips that show in a plain log. Swift Testing reports a test whose condition trait is false
  /// as skipped (`➜ Test … skipped: "why"`), and one that calls `Test.cancel` as cancelled; each of
  /// these also prints `SKIPPED: <test>: <why>` to standard error, which `scripts/test.sh` lists
  /// again at the end of the run, so a test the machine cannot run is never silently absent.
  extension Trait where Self == ConditionTrait {
    /// Runs the test (or suite) only when `condition` holds; otherwise prints
    /// `SKIPPED: <name>: <why>` and Swift Testing reports it skipped with `why`.
    public static func requires(
      _ condition: @autoclosure @escaping @Sendable () -> Bool, _ name: String, _ why: String,
      sourceLocation: SourceLocation = #_sourceLocation
    ) -> Self {
      .enabled(Comment(rawValue: why), sourceLocation: sourceLocation) {
        let met = condition()
        // (a suite's condition is evaluated again for each of its tests: one line is enough)
        if !met, Skips.announced.withLock({ $0.insert(name).inserted }) { Skips.announce(name, why) }
        return met
      }
    }
  }

  /// Skips decided inside a running test.
  public enum Skips {
    /// The names a condition trait has announced as skipped.
    static let announced = Locked<Set<String>>([])

    /// Prints `SKIPPED: <name>: <why>` to standard error.
    public static func announce(_ name: String, _ why: String) {
      FileHandle.standardError.write(Data("SKIPPED: \(name): \(why)\n".utf8))
    }

    /// Announces that the running test stops here, and stops it: Swift Testing reports it
    /// cancelled with `why` (not passed, not failed).
    public static func skipRest(_ why: String, sourceLocation: SourceLocation = #_sourceLocation) throws
      -> Never
    {
      announce(Test.current?.displayName ?? Test.current?.name ?? "a test", why)
      try Test.cancel(Comment(rawValue: why), sourceLocation: sourceLocation)
    }

    /// Announces that part of the running test is not checked here (it goes on with the rest).
    public static func skipPart(_ why: String) {
      announce(Test.current?.displayName ?? Test.current?.name ?? "a test", "(part of the test) " + why)
    }
  }
#endif
