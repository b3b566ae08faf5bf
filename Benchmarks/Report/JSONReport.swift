/// The results as one flat JSON object: run facts as strings, then for every latency
/// `KEY_n` and `KEY_p0_UNIT` … `KEY_p100_UNIT`, every ratio and value under its key, and the
/// goals as `goal_N_met` booleans.
enum JSONReport {
  /// The JSON text (one object, keys in measuring order).
  static func render(_ report: Report, goals: [GoalCheck]) -> String {
    var fields: [(String, String)] = []
    for fact in report.facts { fields.append((fact.key, Format.jsonString(fact.value))) }
    for row in report.latencies {
      fields.append(("\(row.key)_n", String(row.distribution.count)))
      for (label, value) in row.distribution.summary.labelled {
        fields.append(("\(row.key)_\(label)_\(row.unit.rawValue)", Format.json(value * row.unit.perSecond)))
      }
    }
    for row in report.ratios {
      fields.append((row.key, Format.json(row.ratio)))
    }
    for row in report.values {
      fields.append((row.key, Format.json(row.jsonValue)))
    }
    for (index, goal) in goals.enumerated() {
      fields.append(("goal_\(index + 1)", Format.jsonString(goal.goal)))
      fields.append(("goal_\(index + 1)_met", goal.met.map { $0 ? "true" : "false" } ?? "null"))
    }
    fields.append(("goals_met", String(goals.filter { $0.met == true }.count)))
    fields.append(("goals_total", String(goals.count)))
    fields.append(("notes", Format.jsonString(report.notes.joined(separator: " "))))
    let body = fields.map { "  \(Format.jsonString($0.0)): \($0.1)" }.joined(separator: ",\n")
    return "{\n" + body + "\n}\n"
  }
}
