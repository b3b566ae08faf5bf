// Compiled only where Swift Testing is (a test build): a release build with the Swift runtime
// linked statically (`swift build -c release --static-swift-stdlib`) has no Testing module, and
// SwiftPM builds this target there too, so without the condition it would fail the whole build.
#if canImport(Testing)
  import TestSupport
  import Testing

  /// Runs each test of a suite on a thread of its own (``withThreadOfItsOwn(_:)``), off Swift's
  /// cooperative pool, which has one thread per core for every test of the process.
  ///
  /// For the suites that run the library against deadlines (a fetch answered by its deadline +
  /// 250 ms, a miss held at a stage until its deadline has passed): a test's task must not wait
  /// behind the pool's queue of other tests' work to be resumed when the answer comes, nor its
  /// set-up eat into its deadline there. The task, its task-local values and its child tasks
  /// stay the same; the library's own unstructured tasks still run on the pool. Starts the
  /// ``SchedulingLag`` probes that ``deadlineMargin`` reads.
  public struct ThreadOfItsOwnTrait: SuiteTrait, TestTrait, TestScoping {
    /// Applies to every test of the suite, nested suites included.
    public var isRecursive: Bool { true }

    /// A scope for each test case, not for the suite as a whole.
    public func scopeProvider(for test: Test, testCase: Test.Case?) -> Self? {
      testCase == nil ? nil : self  // each test case, not the suite as a whole
    }

    /// Runs the test case inside the trait\'s scope.
    public func provideScope(
      for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void
    ) async throws {
      SchedulingLag.start()
      try await SchedulingLag.$testStart.withValue(.now) {
        try await withThreadOfItsOwn { try await function() }
      }
    }
  }

  extension Trait where Self == ThreadOfItsOwnTrait {
    /// Each test runs on a thread of its own, off the cooperative pool.
    public static var threadOfItsOwn: Self { Self() }
  }

  /// Runs each test of a suite on the process's one worker thread for CPU-bound tests
  /// (``withSharedWorkerThread(isolation:_:)``): off the cooperative pool, and one such test at a
  /// time, so that the many value tests (probing, parsing, hashing every sample) take at most one
  /// core from the tests that measure time, instead of both pool threads or every core at once.
  public struct CPUBoundTrait: SuiteTrait, TestTrait, TestScoping {
    /// Applies to every test of the suite, nested suites included.
    public var isRecursive: Bool { true }

    /// A scope for each test case, not for the suite as a whole.
    public func scopeProvider(for test: Test, testCase: Test.Case?) -> Self? {
      testCase == nil ? nil : self
    }

    /// Runs the test case inside the trait\'s scope.
    public func provideScope(
      for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void
    ) async throws {
      SchedulingLag.start()
      try await SchedulingLag.$testStart.withValue(.now) {
        try await withSharedWorkerThread { try await function() }
      }
    }
  }

  extension Trait where Self == CPUBoundTrait {
    /// Each test runs on the one worker thread for CPU-bound tests, off the cooperative pool.
    public static var cpuBound: Self { Self() }
  }
#endif
