/// The results as Markdown tables: readable on a terminal, pasted as is into the README.
enum Table {
  /// Every table of the report, with the run's facts above and the notes below.
  static func render(_ report: Report, goals: [GoalCheck]) -> String {
    var out: [String] = []
    out.append("AttachmentKit benchmark")
    out.append("")
    for fact in report.facts { out.append("- \(fact.key): \(fact.value)") }
    out.append("")
    out.append(latencies(report))
    if !report.ratios.isEmpty { out.append(ratios(report)) }
    if !report.values.isEmpty { out.append(values(report)) }
    out.append(goalTable(goals))
    if !report.notes.isEmpty {
      out.append("Notes:")
      out.append("")
      for note in report.notes { out.append("- \(note)") }
      out.append("")
    }
    return out.joined(separator: "\n")
  }

  /// Latency percentiles, and p50 and p99 as shares of the 30 s budget.
  static func latencies(_ report: Report) -> String {
    var rows = [
      "| scenario | n | p0 | p50 | p90 | p99 | p100 | p50 / 30 s | p99 / 30 s |",
      "|---|--:|--:|--:|--:|--:|--:|--:|--:|",
    ]
    var section = ""
    for row in report.latencies {
      if row.section != section {
        section = row.section
        rows.append("| **\(section)** | | | | | | | | |")
      }
      let p = row.distribution.summary
      let cells = [p.p0, p.p50, p.p90, p.p99, p.p100].map(Format.seconds)
      rows.append(
        "| \(row.name) | \(row.distribution.count) | \(cells.joined(separator: " | ")) | "
          + "\(Format.budgetShare(p.p50)) | \(Format.budgetShare(p.p99)) |")
    }
    return rows.joined(separator: "\n") + "\n"
  }

  /// Our p50 against the other clients' (ratio = ours / theirs, below 1 is faster).
  static func ratios(_ report: Report) -> String {
    var rows = [
      "| comparison (medians: wall time, or peak RSS; or totals) | ours | theirs | ours / theirs | goal |",
      "|---|--:|--:|--:|--:|",
    ]
    for row in report.ratios {
      let goal = row.goal.map { "≤ " + Format.ratio($0) } ?? ""
      let ours = Format.measure(row.ours, row.unit)
      let theirs = Format.measure(row.theirs, row.unit)
      rows.append(
        "| \(row.name) | \(ours) | \(theirs) | "
          + "\(Format.ratio(row.ratio)) | \(goal) |")
    }
    return rows.joined(separator: "\n") + "\n"
  }

  /// Single values: bytes, memory, throughput.
  static func values(_ report: Report) -> String {
    var rows = ["| measurement | value |", "|---|--:|"]
    var section = ""
    for row in report.values {
      if row.section != section {
        section = row.section
        rows.append("| **\(section)** | |")
      }
      rows.append("| \(row.name) | \(Format.value(row)) |")
    }
    return rows.joined(separator: "\n") + "\n"
  }

  /// The goals and whether they were met.
  static func goalTable(_ goals: [GoalCheck]) -> String {
    var rows = ["| goal | measured | met |", "|---|--:|:-:|"]
    for goal in goals {
      let met = goal.met.map { $0 ? "yes" : "**no**" } ?? "n/a"
      rows.append("| \(goal.goal) | \(goal.measured) | \(met) |")
    }
    return rows.joined(separator: "\n") + "\n"
  }
}
