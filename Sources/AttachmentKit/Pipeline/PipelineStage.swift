/// The points a miss passes after its download, in order, as seen by a ``StageObserver``.
enum PipelineStage: Sendable, Equatable {
  /// The body is complete on disk; the complete-file checks are next.
  case downloaded
  /// The checks accepted the file; publishing is next.
  case validated
  /// The work for the miss is over, whatever its outcome (its body file published or removed).
  case finished
}

/// Called synchronously on the check thread at each ``PipelineStage`` of a miss, with the
/// request's URL. Internal: the tests use it to hold a miss at a stage until its deadline has
/// passed or its caller has gone, which no timing could arrange reliably.
typealias StageObserver = @Sendable (PipelineStage, String) -> Void
