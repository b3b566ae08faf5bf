import AttachmentKit
import Dispatch
import Glibc
import Synchronization

/// Runs many inputs through the pipeline with bounded concurrency, emitting results in input
/// order as soon as an input and all before it are done, and stopping cleanly on Ctrl-C.
enum Batch {
  /// How a batch ended.
  struct Outcome {
    /// Results that finished, in input order.
    var results: [ResultRecord]
    /// Whether Ctrl-C stopped it.
    var interrupted: Bool
  }

  /// One input of a batch: its text, the URL it was checked into once (or why it could not
  /// be), and what its cache lookup found once it was looked up, so neither the fast cache
  /// path nor the pipeline parses or looks it up again.
  struct Input: Sendable {
    let text: String
    let url: Result<AttachmentURL, AttachmentError>
    /// The input's one cache lookup, when the fast path made it (`nil`: the pipeline looks up).
    var lookup: Lookup?

    init(_ text: String) {
      self.text = text
      url = Result { () throws(AttachmentError) in try AttachmentURL(text) }
    }
  }

  /// Runs `inputs`; when one fails or is refused and `fallback` is given, the fallback is
  /// fetched in its place within what is left of that input's `timeout`
  /// (``fetch(_:fallback:pipeline:timeout:reload:)``).
  static func run(
    inputs: [Input], concurrency: Int, pipeline: AttachmentPipeline, timeout: Duration, reload: Bool,
    fallback: Input? = nil, progress: ProgressBar?, emit: @escaping @Sendable (ResultRecord) -> Void
  ) async -> Outcome {
    let interrupted = Atomic<Bool>(false)
    let work = Task { () -> [ResultRecord] in
      await withTaskGroup(of: (Int, ResultRecord).self) { group in
        var next = 0
        var pending: [Int: ResultRecord] = [:]
        var emitted = 0
        var ordered: [ResultRecord] = []
        func launch() {
          guard next < inputs.count else { return }
          let index = next
          let input = inputs[index]
          next += 1
          group.addTask {
            (
              index,
              await fetch(input, fallback: fallback, pipeline: pipeline, timeout: timeout, reload: reload)
            )
          }
        }
        for _ in 0..<min(concurrency, inputs.count) { launch() }
        while let (index, result) = await group.next() {
          progress?.advance(bytes: result.bytesTransferred ?? 0)
          pending[index] = result
          while let ready = pending.removeValue(forKey: emitted) {
            progress?.clear()
            emit(ready)
            ordered.append(ready)
            emitted += 1
          }
          progress?.draw()
          if !Task.isCancelled { launch() }
        }
        return ordered
      }
    }
    let signals = SignalWatcher { [work] in
      interrupted.store(true, ordering: .relaxed)
      work.cancel()
    }
    let results = await work.value
    signals.stop()
    return Outcome(results: results, interrupted: interrupted.load(ordering: .relaxed))
  }

  /// `input`'s record, or, when it was not accepted (and not cancelled) and `fallback` is given,
  /// the fallback's in its place if that is accepted: fetched through the cache (never reloaded)
  /// with what is left of the input's `timeout`, and not at all when nothing is left. A fallback
  /// that fails too leaves the input's own record.
  private static func fetch(
    _ input: Input, fallback: Input?, pipeline: AttachmentPipeline, timeout: Duration, reload: Bool
  ) async -> ResultRecord {
    let start = ContinuousClock.now
    let record = await fetch(input, pipeline: pipeline, timeout: timeout, reload: reload)
    guard let fallback, record.outcome != .accepted, let error = record.error, error.code != .cancelled,
      !Task.isCancelled
    else { return record }
    let left = start + timeout - .now
    guard left > .zero else { return record }
    let replacement = await fetch(fallback, pipeline: pipeline, timeout: left, reload: false)
    guard replacement.outcome == .accepted else { return record }
    return ResultRecord(
      input: input.text, fallback: replacement, failure: error,
      totalMicroseconds: Report.elapsed(since: start))
  }

  private static func fetch(
    _ input: Input, pipeline: AttachmentPipeline, timeout: Duration, reload: Bool
  ) async -> ResultRecord {
    let start = ContinuousClock.now
    do throws(AttachmentError) {
      let url = try input.url.get()
      let attachment =
        if let lookup = input.lookup {
          try await pipeline.attachment(for: url, after: lookup, deadline: .now + timeout)
        } else {
          try await pipeline.attachment(for: url, timeout: timeout, reload: reload)
        }
      return ResultRecord(input: input.text, attachment: attachment)
    } catch {
      return ResultRecord(
        input: input.text, error: error, source: nil, totalMicroseconds: Report.elapsed(since: start))
    }
  }
}

/// Turns SIGINT into a callback (on a Dispatch queue) while it is installed.
final class SignalWatcher: @unchecked Sendable {
  private let source: any DispatchSourceSignal

  init(onInterrupt: @escaping @Sendable () -> Void) {
    signal(SIGINT, SIG_IGN)
    source = DispatchSource.makeSignalSource(signal: SIGINT, queue: .global())
    source.setEventHandler(handler: onInterrupt)
    source.resume()
  }

  func stop() {
    source.cancel()
    signal(SIGINT, SIG_DFL)
  }
}
