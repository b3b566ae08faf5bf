import Synchronization

/// Counts how often the probes were asked to identify the first bytes of a pipeline's
/// downloaded bodies (``MediaProbe/identify(prefix:)`` from the streaming sniffer, or from the
/// validator when nothing was sniffed). The design is one identification per miss: the sniffer
/// identifies, and the validator, the rescue decision and the record continue from its verdict.
/// A rescued file's own check (a different file) is not counted. Tests read it to prove that.
final class IdentificationTally: Sendable {
  private let count = Atomic<Int>(0)

  /// Counts one identification.
  func record() { count.add(1, ordering: .relaxed) }

  /// The identifications counted so far.
  var value: Int { count.load(ordering: .relaxed) }
}
