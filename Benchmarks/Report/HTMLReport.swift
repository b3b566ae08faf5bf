import Foundation

/// A self-contained HTML page (inline SVG and CSS, no scripts): every latency distribution on
/// a log scale against the 30 s budget (and the 2–5 s the product documents promise), the
/// ratio bars, and the tables.
enum HTMLReport {
  /// Left edge of the plot area, in pixels.
  private static let plotLeft = 430.0
  /// Right edge of the plot area, in pixels.
  private static let plotRight = 1090.0
  /// The log axis: 10^lowDecade … 10^highDecade seconds.
  private static let lowDecade = -6.0
  /// The top of the log axis.
  private static let highDecade = 2.0

  /// The page.
  static func render(_ report: Report, goals: [GoalCheck]) -> String {
    let facts = report.facts.map { "<li><b>\(Format.html($0.key))</b>: \(Format.html($0.value))</li>" }
    return """
      <!DOCTYPE html>
      <html lang="en"><head><meta charset="utf-8">
      <title>AttachmentKit benchmark</title>
      <style>
      body { font: 14px/1.4 -apple-system, "DejaVu Sans", Arial, sans-serif; margin: 24px; color: #222; }
      h1 { font-size: 22px; margin: 0 0 8px; } h2 { font-size: 17px; margin: 22px 0 6px; }
      ul.facts { columns: 2; margin: 0; padding-left: 18px; font-size: 12px; }
      table { border-collapse: collapse; font-size: 12px; margin-top: 6px; }
      td, th { border: 1px solid #ccc; padding: 2px 6px; text-align: right; }
      td:first-child, th:first-child { text-align: left; }
      .no { color: #b00; font-weight: bold; } .yes { color: #070; }
      svg text { font: 11px "DejaVu Sans", Arial, sans-serif; }
      </style></head><body>
      <h1>AttachmentKit benchmark</h1>
      <ul class="facts">\(facts.joined())</ul>
      <h2>Latency distributions (log scale) against the 30 s budget</h2>
      \(latencyChart(report))
      <h2>Ours / theirs (p50 wall time; below 1 = we are faster)</h2>
      \(ratioChart(report))
      <h2>Goals</h2>
      \(goalTable(goals))
      <h2>Measurements</h2>
      \(valueTable(report))
      \(notes(report))
      </body></html>

      """
  }

  /// The x position of `seconds` on the log axis (clamped to the axis).
  private static func x(_ seconds: Double) -> Double {
    let decade = log10(max(seconds, pow(10, lowDecade)))
    let share = (min(decade, highDecade) - lowDecade) / (highDecade - lowDecade)
    return plotLeft + share * (plotRight - plotLeft)
  }

  /// One row per latency distribution: p0–p100 line, p50–p90 box, p99 tick, p50 dot.
  private static func latencyChart(_ report: Report) -> String {
    let rowHeight = 22.0
    let top = 34.0
    let height = top + rowHeight * Double(report.latencies.count) + 30
    let bottom = height - 22
    var parts: [String] = []
    parts.append(rect(x(2), top - 8, x(5) - x(2), bottom - top + 8, fill: "#fde6c4"))
    parts.append(text(x(2) - 4, top - 12, "documents: 2–5 s", anchor: "end", fill: "#a60"))
    for decade in Int(lowDecade)...Int(highDecade) {
      let seconds = pow(10, Double(decade))
      parts.append(line(x(seconds), top - 8, x(seconds), bottom, stroke: "#ddd"))
      parts.append(text(x(seconds), height - 8, Format.seconds(seconds), anchor: "middle"))
    }
    let budget = x(budgetSeconds)
    parts.append(line(budget, top - 20, budget, bottom, stroke: "#c00", width: 2))
    parts.append(text(budget - 4, top - 22, "30 s budget", anchor: "end", fill: "#c00"))
    for (index, row) in report.latencies.enumerated() {
      let y = top + rowHeight * Double(index) + rowHeight / 2
      let p = row.distribution.summary
      parts.append(text(8, y + 4, "\(row.name) — p50 \(Format.seconds(p.p50))"))
      parts.append(line(x(p.p0), y, x(p.p100), y, stroke: "#888", width: 1.5))
      parts.append(rect(x(p.p50), y - 6, max(2, x(p.p90) - x(p.p50)), 12, fill: "#6a9fd8"))
      parts.append(line(x(p.p99), y - 8, x(p.p99), y + 8, stroke: "#124", width: 2))
      parts.append("<circle cx=\"\(number(x(p.p50)))\" cy=\"\(number(y))\" r=\"3.5\" fill=\"#000\"/>")
    }
    let legend =
      "<p style=\"font-size:12px\">Grey line p0–p100, blue box p50–p90, dark tick p99, dot p50. "
      + "Red line: the extension's 30 s budget; shaded: the 2–5 s the product documents promise.</p>"
    return svg(height: height, parts) + legend
  }

  /// Horizontal bars of ours / theirs with the parity line and each goal.
  private static func ratioChart(_ report: Report) -> String {
    let rowHeight = 22.0
    let top = 10.0
    let maximum = max(2, (report.ratios.map(\.ratio).max() ?? 1) * 1.1)
    let height = top + rowHeight * Double(report.ratios.count) + 30
    let bottom = height - 22
    func bar(_ value: Double) -> Double { plotLeft + value / maximum * (plotRight - plotLeft) }
    var parts: [String] = []
    for tick in stride(from: 0.0, through: maximum, by: maximum > 5 ? 1 : 0.5) {
      parts.append(line(bar(tick), top, bar(tick), bottom, stroke: "#eee"))
      parts.append(text(bar(tick), height - 8, Format.ratio(tick), anchor: "middle"))
    }
    for (index, row) in report.ratios.enumerated() {
      let y = top + rowHeight * Double(index)
      let met = row.goal.map { row.ratio <= $0 } ?? (row.ratio <= 1)
      parts.append(text(8, y + 15, row.name))
      parts.append(
        rect(plotLeft, y + 4, max(1, bar(row.ratio) - plotLeft), 14, fill: met ? "#5aa469" : "#d9822b"))
      parts.append(text(bar(row.ratio) + 4, y + 15, Format.ratio(row.ratio)))
      if let goal = row.goal {
        parts.append(line(bar(goal), y + 1, bar(goal), y + 21, stroke: "#c00", width: 2, dashed: true))
      }
    }
    parts.append(line(bar(1), top, bar(1), bottom, stroke: "#000"))
    let legend =
      "<p style=\"font-size:12px\">Black line: parity. Red dashes: the goal of that comparison. "
      + "Green: goal met (or faster where there is no goal).</p>"
    return svg(height: height, parts) + legend
  }

  /// An inline SVG element holding `parts`.
  private static func svg(height: Double, _ parts: [String]) -> String {
    "<svg width=\"1140\" height=\"\(Int(height))\" xmlns=\"http://www.w3.org/2000/svg\">\n"
      + parts.joined(separator: "\n") + "\n</svg>"
  }

  /// An SVG line.
  private static func line(
    _ x1: Double, _ y1: Double, _ x2: Double, _ y2: Double, stroke: String, width: Double = 1,
    dashed: Bool = false
  ) -> String {
    let dash = dashed ? " stroke-dasharray=\"3,2\"" : ""
    return "<line x1=\"\(number(x1))\" y1=\"\(number(y1))\" x2=\"\(number(x2))\" y2=\"\(number(y2))\" "
      + "stroke=\"\(stroke)\" stroke-width=\"\(number(width))\"\(dash)/>"
  }

  /// An SVG rectangle.
  private static func rect(_ x: Double, _ y: Double, _ width: Double, _ height: Double, fill: String)
    -> String
  {
    "<rect x=\"\(number(x))\" y=\"\(number(y))\" width=\"\(number(width))\" height=\"\(number(height))\" "
      + "fill=\"\(fill)\"/>"
  }

  /// An SVG text (escaped).
  private static func text(
    _ x: Double, _ y: Double, _ content: String, anchor: String = "start", fill: String = "#222"
  ) -> String {
    "<text x=\"\(number(x))\" y=\"\(number(y))\" text-anchor=\"\(anchor)\" fill=\"\(fill)\">"
      + Format.html(content) + "</text>"
  }

  /// A coordinate with one decimal.
  private static func number(_ value: Double) -> String { String(format: "%.1f", value) }

  /// The goals table.
  private static func goalTable(_ goals: [GoalCheck]) -> String {
    let rows = goals.map { goal -> String in
      let met =
        goal.met.map { $0 ? "<span class=\"yes\">yes</span>" : "<span class=\"no\">no</span>" } ?? "n/a"
      return
        "<tr><td>\(Format.html(goal.goal))</td><td>\(Format.html(goal.measured))</td><td>\(met)</td></tr>"
    }
    return "<table><tr><th>goal</th><th>measured</th><th>met</th></tr>\(rows.joined())</table>"
  }

  /// The single values.
  private static func valueTable(_ report: Report) -> String {
    let rows = report.values.map {
      "<tr><td>\(Format.html($0.name))</td><td>\(Format.html(Format.value($0)))</td></tr>"
    }
    return "<table><tr><th>measurement</th><th>value</th></tr>\(rows.joined())</table>"
  }

  /// The notes, as a list.
  private static func notes(_ report: Report) -> String {
    guard !report.notes.isEmpty else { return "" }
    return "<h2>Notes</h2><ul>" + report.notes.map { "<li>\(Format.html($0))</li>" }.joined() + "</ul>"
  }
}
