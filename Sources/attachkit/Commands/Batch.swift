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

    /// A line of a URL list: a line that is not one URL is an `invalid_url` input naming it.
    init(_ entry: URLList.Entry) {
      text = entry.text
      url = Result { () throws(AttachmentError) in try entry.url() }
    }
  }

  /// Runs `inputs`, each a request of `profile`; when one fails or is refused and `fallback` is
  /// given, the fallback is fetched in its place within what is left of that input's `timeout`
  /// (``fetch(_:fallback:pipeline:timeout:profile:reload:)``).
  static func run(
    inputs: [Input], concurrency: Int, pipeline: AttachmentPipeline, timeout: Duration,
    profile: AttachmentProfile = .ios, reload: Bool, fallback: Input? = nil, progress: ProgressBar?,
    emit: @escaping @Sendable (ResultRecord) -> Void
  ) async -> Outcome {
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
              await fetch(
                input, fallback: fallback, pipeline: pipeline, timeout: timeout, profile: profile,
                reload: reload)
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
    let signals = SignalWatcher { [work] in work.cancel() }
    let results = await work.value
    signals.stop()
    return Outcome(results: results, interrupted: signals.hasFired)
  }

  /// `input`'s record: one ``AttachmentRequest`` whose alternative is `fallback`, when given.
  /// When the input fails or is refused (not stopped: cancelled or out of time), the fallback is
  /// fetched in its place within what is left of the same deadline, and its record stands for
  /// the input's with the input's own error (``ResultRecord/init(input:fallback:failure:totalMicroseconds:)``);
  /// a fallback that fails too leaves the input's own record.
  private static func fetch(
    _ input: Input, fallback: Input?, pipeline: AttachmentPipeline, timeout: Duration,
    profile: AttachmentProfile, reload: Bool
  ) async -> ResultRecord {
    let start = ContinuousClock.now
    do throws(AttachmentError) {
      var request = AttachmentRequest(
        url: try input.url.get(), deadline: start + timeout, profile: profile,
        cachePolicy: reload ? .reload : .useCache)
      if let fallback, case .success(let url) = fallback.url { request.alternatives = [url] }
      let attachment =
        if let lookup = input.lookup {
          try await pipeline.attachment(request, after: lookup)
        } else {
          try await pipeline.attachment(request)
        }
      if let fallback, attachment.alternative != nil, let failure = attachment.failures.first {
        return ResultRecord(
          input: input.text, fallback: ResultRecord(input: fallback.text, attachment: attachment),
          failure: failure, totalMicroseconds: Report.elapsed(since: start))
      }
      return ResultRecord(input: input.text, attachment: attachment)
    } catch {
      // With a fallback, the message names how it failed too; the code is the input's own.
      return ResultRecord(
        input: input.text, error: error, source: nil, totalMicroseconds: Report.elapsed(since: start))
    }
  }
}

/// Turns SIGINT into a callback (on a Dispatch queue) while it is installed.
final class SignalWatcher: @unchecked Sendable {
  private let source: any DispatchSourceSignal
  private let fired = Atomic<Bool>(false)

  /// Whether SIGINT has arrived since the watcher was installed. Safe from any thread.
  var hasFired: Bool { fired.load(ordering: .acquiring) }

  init(onInterrupt: @escaping @Sendable () -> Void = {}) {
    signal(SIGINT, SIG_IGN)
    source = DispatchSource.makeSignalSource(signal: SIGINT, queue: .global())
    source.setEventHandler { [weak self] in
      self?.fired.store(true, ordering: .releasing)
      onInterrupt()
    }
    source.resume()
  }

  func stop() {
    source.cancel()
    signal(SIGINT, SIG_DFL)
  }
}
