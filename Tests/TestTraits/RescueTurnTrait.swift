// Compiled only where Swift Testing is (a test build): a release build with the Swift runtime
// linked statically (`swift build -c release --static-swift-stdlib`) has no Testing module, and
// SwiftPM builds this target there too, so without the condition it would fail the whole build.
#if canImport(Testing)
  import Testing

  /// One test at a time among the suites that rescue in this process, whichever suite each is in.
  ///
  /// The image and media rescue gates are process-wide (one libvips job at a time; a bounded
  /// number of FFmpeg jobs): a test holding one (a bomb stopped at its deadline, which a loaded
  /// machine can stretch to many seconds) makes another suite's rescue wait for it, and that
  /// rescue's deadline passes in the queue. `.serialized` orders the tests of one suite only; this
  /// trait orders the tests of every suite that carries it. Waiting for the turn suspends the
  /// test's task; it blocks no thread.
  public struct RescueTurnTrait: SuiteTrait, TestTrait, TestScoping {
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
      await RescueTurn.shared.acquire()
      do {
        try await function()
      } catch {
        await RescueTurn.shared.release()
        throw error
      }
      await RescueTurn.shared.release()
    }
  }

  extension Trait where Self == RescueTurnTrait {
    /// The test runs only while no other test of a suite with this trait runs (see
    /// ``RescueTurnTrait``).
    public static var rescueTurn: Self { Self() }
  }

  /// A first-come, first-served turn for tasks: ``acquire()`` suspends until the turn is free.
  actor RescueTurn {
    /// The one turn of the process.
    static let shared = RescueTurn()

    private var taken = false
    private var waiting: [CheckedContinuation<Void, Never>] = []

    /// Suspends until the turn is this caller's.
    func acquire() async {
      guard taken else {
        taken = true
        return
      }
      await withCheckedContinuation { waiting.append($0) }
    }

    /// Hands the turn to the next waiter, or frees it.
    func release() {
      if waiting.isEmpty {
        taken = false
      } else {
        waiting.removeFirst().resume()  // the turn passes on, still taken
      }
    }
  }
#endif
