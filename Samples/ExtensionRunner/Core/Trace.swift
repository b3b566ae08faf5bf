import AttachmentKit
import Foundation
import PosixLock

/// How a step of the extension's work ended.
public enum StepOutcome: String, Sendable {
  /// Still running (only seen in a snapshot taken at delivery).
  case running
  /// Done.
  case ok
  /// Failed; the content falls back to the best attempt so far.
  case failed
  /// Not needed for this payload.
  case skipped
  /// Cancelled because the time ran out (or delivery had already happened).
  case cancelled
  /// A point in time worth recording, such as a delivery.
  case event
}

/// One step of the trace, with times in milliseconds since the runner started.
public struct TraceStep: Sendable, Equatable {
  /// What the step is: `payload`, `decrypt`, `attachment photo`, `deliver`…
  public var name: String
  /// When it started.
  public var startMs: Double
  /// When it ended (`nil` while running).
  public var endMs: Double?
  /// How it ended.
  public var outcome: StepOutcome
  /// Details for people: an error code and message, a type and a size…
  public var detail: String
}

/// The record of what the runner did and when: written to standard error, and to the JSON
/// output with `--trace`.
///
/// Names and details hold what came from the payload, a server or a URL (identifiers,
/// categories, `Content-Type` values, error messages), so the trace escapes control characters
/// (C0, DEL, C1) in both as it records them, with `Redaction.escapeControlCharacters`: no
/// terminal escape reaches standard error raw, and every step stays on one line.
public final class Trace: Sendable {
  /// Identifies a step begun with ``begin(_:detail:)``.
  public struct Handle: Sendable {
    fileprivate let index: Int
  }

  /// The instant all times are measured from.
  public let origin: ContinuousClock.Instant
  private let steps = Locked<[TraceStep]>([])

  /// Starts a trace whose times count from `origin` (the runner's start).
  public init(origin: ContinuousClock.Instant = .now) {
    self.origin = origin
  }

  /// Milliseconds from the origin to `instant`, to the microsecond.
  public func milliseconds(at instant: ContinuousClock.Instant = .now) -> Double {
    ((instant - origin).inMilliseconds * 1000).rounded() / 1000
  }

  /// Opens a step; close it with ``end(_:_:detail:)``.
  public func begin(_ name: String, detail: String = "") -> Handle {
    let now = milliseconds()
    let (name, detail) = (Self.escape(name), Self.escape(detail))
    return steps.withLock { steps in
      steps.append(TraceStep(name: name, startMs: now, endMs: nil, outcome: .running, detail: detail))
      return Handle(index: steps.count - 1)
    }
  }

  /// Closes a step with its outcome (a step already closed keeps its first outcome).
  public func end(_ handle: Handle, _ outcome: StepOutcome, detail: String) {
    let now = milliseconds()
    let detail = Self.escape(detail)
    steps.withLock { steps in
      guard steps.indices.contains(handle.index), steps[handle.index].endMs == nil else { return }
      steps[handle.index].endMs = now
      steps[handle.index].outcome = outcome
      steps[handle.index].detail = detail
    }
  }

  /// Records a step that takes no time.
  public func note(_ name: String, _ outcome: StepOutcome, detail: String) {
    let now = milliseconds()
    let (name, detail) = (Self.escape(name), Self.escape(detail))
    steps.withLock { steps in
      steps.append(TraceStep(name: name, startMs: now, endMs: now, outcome: outcome, detail: detail))
    }
  }

  /// `text` fit for a terminal: control characters written as `\u{XX}`.
  static func escape(_ text: String) -> String {
    Redaction.escapeControlCharacters(text)
  }

  /// The steps so far, in the order they began.
  public var snapshot: [TraceStep] {
    steps.withLock { $0 }
  }

  /// The steps as lines for standard error: start, duration, outcome, name, detail.
  public static func render(_ steps: [TraceStep]) -> String {
    steps.map { step in
      let start = String(format: "%9.1f", step.startMs)
      let duration = step.endMs.map { String(format: "%8.1f", $0 - step.startMs) } ?? "       -"
      let outcome = step.outcome.rawValue.padding(toLength: 9, withPad: " ", startingAt: 0)
      let name =
        step.name.count < 24 ? step.name.padding(toLength: 24, withPad: " ", startingAt: 0) : step.name
      return "trace \(start) ms +\(duration) ms  \(outcome) \(name) \(step.detail)"
    }.joined(separator: "\n")
  }
}

extension TraceStep {
  /// The step as JSON (`endMs` left out while it runs).
  var json: JSON {
    var fields: [(key: String, value: JSON)] = [("detail", .string(detail))]
    if let endMs { fields.append(("endMs", .double(endMs))) }
    fields += [
      ("name", .string(name)), ("outcome", .string(outcome.rawValue)), ("startMs", .double(startMs)),
    ]
    return .object(fields)
  }
}
