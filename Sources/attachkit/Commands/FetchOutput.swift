import AttachmentKit

/// Where `fetch --output` copies each delivered file: to one file, into a directory under a
/// name from the URL with the canonical extension, or (`-`) to standard output. Used from one
/// task at a time (the report's), in input order, so names given twice are numbered the same
/// way on every run.
final class FetchOutput: @unchecked Sendable {
  /// The `--output` value as given.
  private let target: String
  /// Whether the files go into ``target`` as a directory.
  private let intoDirectory: Bool
  /// Whether the file's bytes go to standard output (`--output -`): the report then goes to
  /// standard error.
  let toStandardOutput: Bool
  /// The names already given in the directory during this run.
  private var usedNames: Set<String> = []

  /// The output for `--output target`, for a run of `urlCount` URLs; `nil` when `target` is no
  /// directory and there is more than one URL (the caller reports the usage error).
  init?(target: String, urlCount: Int) {
    self.target = target
    toStandardOutput = target == "-"
    intoDirectory = !toStandardOutput && DeliveredFile.isDirectory(target)
    if !intoDirectory && urlCount > 1 { return nil }
  }

  /// `record` with its accepted file copied: its path is then the copy's (written to standard
  /// output, the path stays the cached file's). A copy that fails turns the record into an
  /// `io_error` failure; other records pass unchanged.
  func deliver(_ record: ResultRecord) -> ResultRecord {
    guard record.outcome == .accepted, let path = record.path, let validation = record.validation else {
      return record
    }
    do throws(AttachmentError) {
      if toStandardOutput {
        try DeliveredFile.writeToStandardOutput(path)
        return record
      }
      let destination = intoDirectory ? directoryEntry(for: record.input, validation.fileExtension) : target
      try DeliveredFile.copy(path, to: destination)
      var delivered = record
      delivered.path = destination
      return delivered
    } catch {
      return ResultRecord(
        input: record.input, error: error, source: record.source, totalMicroseconds: record.totalMicroseconds)
    }
  }

  /// The path in the directory for the URL `input`: its name from the URL, numbered (`-2`,
  /// `-3`, …) when an earlier URL of the run took it.
  private func directoryEntry(for input: String, _ fileExtension: String) -> String {
    let name = DeliveredFile.name(forURL: input, fileExtension: fileExtension)
    let stem = name.dropLast(fileExtension.count + 1)
    var candidate = name
    var number = 2
    while !usedNames.insert(candidate).inserted {
      candidate = "\(stem)-\(number).\(fileExtension)"
      number += 1
    }
    return (target.hasSuffix("/") ? target : target + "/") + candidate
  }
}
