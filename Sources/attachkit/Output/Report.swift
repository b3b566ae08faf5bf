import AttachmentKit

/// The instant the command line started running (first touched at the top of `main`).
enum RunClock {
  /// When `main` began; set on first access.
  static let start = ContinuousClock.now
}

/// Prints results as JSON lines or a human table, then a summary line, and decides the exit
/// status. Used from one task at a time (the batch emits in order from its loop).
final class Report: @unchecked Sendable {
  private let json: Bool
  private let quiet: Bool
  private var records: [ResultRecord] = []
  private var printedHeader = false
  /// The run's start, so the summary's wall time covers everything the run did (it can never
  /// be shorter than one of its requests).
  private let start = RunClock.start

  init(json: Bool, quiet: Bool) {
    self.json = json
    self.quiet = quiet
  }

  /// Runs `check` on the local `file` and adds its record: the validation of what lies at
  /// `path` (the file itself, or where the delivered file went), or the refusal, timed.
  func addLocalFile(
    _ file: String, path: String, _ check: () throws(AttachmentError) -> Validation
  ) {
    let start = ContinuousClock.now
    do throws(AttachmentError) {
      let validation = try check()
      add(
        ResultRecord(
          input: file, path: path, validation: validation, totalMicroseconds: Report.elapsed(since: start)))
    } catch {
      add(
        ResultRecord(
          input: file, error: error, source: .file, totalMicroseconds: Report.elapsed(since: start)))
    }
  }

  /// Prints one result (a JSON line, or a table row) at once.
  func add(_ record: ResultRecord) {
    records.append(record)
    if json {
      Terminal.out(record.json.text + "\n")
      return
    }
    if quiet {
      if record.outcome != .accepted, let error = record.error {
        let input = record.displayedInput
        Terminal.error("\(input): \(error.code.rawValue): \(Terminal.safe(error.message))\n")
      } else if let fallback = record.fallback {
        let input = record.displayedInput
        Terminal.error(
          "\(input): \(fallback.error.code.rawValue): \(Terminal.safe(fallback.error.message)) "
            + "(fallback \(Terminal.safeURL(fallback.url)) delivered)\n")
      }
      return
    }
    // The header goes out with the first row, in one write.
    let header = printedHeader ? "" : Table.header + "\n"
    printedHeader = true
    Terminal.out(header + Table.row(record) + "\n")
  }

  /// Prints the summary (to stderr with --json, so stdout stays pure JSON lines) and returns
  /// the exit status.
  func finish(interrupted: Bool = false) -> ExitCode {
    let allAccepted = records.allSatisfy { $0.outcome == .accepted }
    if !quiet {
      let summary = Table.summary(
        records: records, wallMicroseconds: Self.elapsed(since: start), interrupted: interrupted)
      if json { Terminal.error(summary + "\n") } else { Terminal.out(summary + "\n") }
    }
    if interrupted { return .interrupted }
    return allAccepted ? .success : .someFailed
  }

  /// Microseconds since `start`.
  static func elapsed(since start: ContinuousClock.Instant) -> Int64 {
    (ContinuousClock.now - start).wholeMicroseconds
  }
}
