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
  /// Whether the table or JSON lines go to standard error (`fetch -o -`: standard output
  /// carries the file).
  private let toStandardError: Bool
  private var records: [ResultRecord] = []
  private var printedHeader = false
  /// The run's start, so the summary's wall time covers everything the run did (it can never
  /// be shorter than one of its requests).
  private let start = RunClock.start

  /// Whether `ats` warnings are left out (`--no-ats-warning`): of the table, its summary and
  /// the JSON lines.
  private let hidesTransportSecurity: Bool

  init(json: Bool, quiet: Bool, toStandardError: Bool = false, hidesTransportSecurity: Bool = false) {
    self.json = json
    self.quiet = quiet
    self.toStandardError = toStandardError
    self.hidesTransportSecurity = hidesTransportSecurity
  }

  /// Runs `check` on the local `file` and adds its record: the validation and where the file
  /// it describes lies (the file itself, where the delivered file went, or `nil` for standard
  /// input spooled to a file that is gone), or the refusal, timed.
  func addLocalFile(
    _ file: String, _ check: () throws(AttachmentError) -> (validation: Validation, path: String?)
  ) {
    let start = ContinuousClock.now
    do throws(AttachmentError) {
      let (validation, path) = try check()
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
    var record = record
    if hidesTransportSecurity { record.validation?.warnings.removeAll(where: Table.isTransportSecurity) }
    records.append(record)
    if json {
      output(record.json.text + "\n")
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
    output(header + Table.row(record) + "\n")
  }

  /// Prints the summary (to stderr with --json, so stdout stays pure JSON lines) and returns
  /// the exit status: ``ExitCode/interrupted``, else ``ExitCode/usage`` when an input is no URL
  /// (`invalid_url`), else ``ExitCode/someFailed`` when an input failed, else
  /// ``ExitCode/someRejected`` when one was rejected, else success.
  func finish(interrupted: Bool = false) -> ExitCode {
    if !quiet {
      let summary = Table.summary(
        records: records, wallMicroseconds: Self.elapsed(since: start), interrupted: interrupted)
      if json {
        Terminal.error(summary + "\n")
      } else {
        // The table says each App Transport Security warning once, with its count; JSON keeps
        // it with each result.
        output(Table.transportSecurityNotes(records: records) + summary + "\n")
      }
    }
    if interrupted { return .interrupted }
    // An input that is no URL can never work, however often it is tried: the input must be
    // fixed, as a bad option must (`sign` refuses it the same way).
    if records.contains(where: { $0.outcome == .failed && $0.error?.code == .invalidURL }) { return .usage }
    if records.contains(where: { $0.outcome == .failed }) { return .someFailed }
    if records.contains(where: { $0.outcome == .rejected }) { return .someRejected }
    return .success
  }

  /// Writes report text where the report goes: standard output, or standard error.
  private func output(_ text: String) {
    if toStandardError { Terminal.error(text) } else { Terminal.out(text) }
  }

  /// Microseconds since `start`.
  static func elapsed(since start: ContinuousClock.Instant) -> Int64 {
    (ContinuousClock.now - start).wholeMicroseconds
  }
}
