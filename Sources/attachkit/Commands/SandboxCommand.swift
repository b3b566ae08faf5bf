import ArgumentParsing
import AttachmentKit
import PipelineOptions

/// `attachkit sandbox`: the rescue workers' sandbox reports on itself, as `chrome://sandbox`
/// does: every layer in force or missing, and every probe (an attack tried from inside a real,
/// confined worker) blocked or ALLOWED.
enum SandboxCommand: RunnableCommand {
  static let configuration = CommandConfiguration(
    name: "sandbox",
    abstract: "Check the rescue workers' sandbox: its layers, and attacks tried from inside a worker.",
    discussion: """
      Starts real rescue workers exactly as a rescue does and, from inside each confined worker, \
      tries one step an attacker who runs code in a decoder would take: write this process's \
      memory, take its descriptor, read its key file, create a file, signal it, inject into the \
      terminal, execve, fork, open a socket, mount, bpf, raise a limit, and more. Prints each layer \
      (seccomp allow-list, Landlock, each namespace, the user, the session, the parent not \
      dumpable, each hard limit, one job per worker) and each probe as blocked or ALLOWED. \
      Exits 0 only when every layer is in force and every probe blocked; serve --rescue makes the \
      same check when it starts.
      """,
    examples: [
      "attachkit sandbox", "attachkit sandbox --json", "attachkit sandbox --key-file /etc/attachkit/keys",
    ],
    sections: [
      HelpSection(
        title: "EXIT CODES",
        body: """
          0    every layer in force, every probe blocked
          1    a layer is missing or a probe got through (each is named)
          2    usage error
          """)
    ])

  static let json = FlagKey(long: "json", help: "Print the report as one JSON object.")
  static let keyFile = OptionKey<String>.option(
    long: "key-file", valueName: "FILE",
    help:
      "A file the probes try to read from inside the worker (serve's keys); default: a mode-600 file the check makes."
  )

  static let arguments: [any ArgumentKey] = [json, keyFile, PipelineOptions.workerJobs]

  static func start(_ arguments: ParsedArguments) throws(UsageError) -> CommandStart {
    var workers = RescueWorkerConfiguration()
    if let jobs = try arguments[PipelineOptions.workerJobs] { workers.jobsPerWorker = jobs }
    let report = RescueWorkers.sandboxReport(configuration: workers, keyFile: arguments[keyFile])
    if arguments[json] {
      Terminal.out(SandboxText.json(report).text + "\n")
    } else {
      Terminal.out(SandboxText.table(report))
    }
    return .finished(report.isComplete ? .success : .someRejected)
  }
}

/// The sandbox report as the command line prints it.
enum SandboxText {
  /// One line a layer and a probe, then a verdict.
  static func table(_ report: SandboxReport) -> String {
    var text = ""
    if let problem = report.problem { text += "no worker could be checked: \(problem)\n" }
    text += "layers\n"
    for layer in report.layers {
      text +=
        "  \(pad(layer.inForce ? "in force" : "MISSING", 9)) \(pad(layer.layer.rawValue, 22)) \(layer.detail)\n"
    }
    text += "probes (from inside a confined worker)\n"
    for probe in report.probes {
      text +=
        "  \(pad(probe.blocked ? "blocked" : "ALLOWED", 9)) \(pad(probe.probe.name, 24)) \(probe.detail)\n"
    }
    if report.isComplete {
      text += "every layer in force, every probe blocked\n"
    } else {
      let missing = report.missingLayers.map(\.rawValue)
      let allowed = report.allowedProbes.map(\.name)
      text += "INCOMPLETE: missing layers: \(missing.isEmpty ? "none" : missing.joined(separator: ", "))"
      text += "; probes that got through: \(allowed.isEmpty ? "none" : allowed.joined(separator: ", "))\n"
    }
    return text
  }

  /// The report as one JSON object.
  static func json(_ report: SandboxReport) -> JSON {
    var object = JSONObject()
    object.set("complete", report.isComplete)
    object.set("problem", report.problem)
    object.set(
      "layers",
      JSON.array(
        report.layers.map { layer in
          var entry = JSONObject()
          entry.set("layer", layer.layer.rawValue)
          entry.set("in_force", layer.inForce)
          entry.set("detail", layer.detail)
          return entry.value
        }))
    object.set(
      "probes",
      JSON.array(
        report.probes.map { probe in
          var entry = JSONObject()
          entry.set("probe", probe.probe.name)
          entry.set("attempt", probe.probe.attempt)
          entry.set("blocked", probe.blocked)
          entry.set("detail", probe.detail)
          return entry.value
        }))
    object.set("missing_layers", JSON.array(report.missingLayers.map { .string($0.rawValue) }))
    return object.value
  }

  /// The one-line warning `fetch --rescue` and `rescue` print when layers are missing.
  static func warning(_ missing: [SandboxLayer]) -> String {
    "attachkit: warning: rescue workers run without these sandbox layers: \(missing.map(\.rawValue).joined(separator: ", ")) (see attachkit sandbox)\n"
  }

  private static func pad(_ text: String, _ width: Int) -> String {
    text.count >= width ? text : text + String(repeating: " ", count: width - text.count)
  }
}
