import AttachmentKit
import Glibc

/// The entry point: parses the options, runs either a memory probe (in a child) or the whole
/// suite, prints the table and writes the JSON and HTML files asked for.
enum Main {
  /// Runs and returns the exit status.
  static func run(_ arguments: [String]) async -> Int32 {
    let options: Options
    do {
      options = try Options(arguments: arguments)
    } catch {
      printError("\(error)")
      return 2
    }
    if let probe = options.memoryProbe {
      guard let base = options.baseURL, let cache = options.cacheDirectory else {
        printError("--memory-probe needs --base and --cache")
        return 2
      }
      do {
        try await MemoryScenario.probe(name: probe, baseURL: base, cache: cache)
        return 0
      } catch {
        printError("memory probe failed: \(error)")
        return 1
      }
    }
    do {
      let report = try await Suite.run(options)
      log("scenarios done, server stopped, scratch removed")
      let goals = Goals.check(report)
      print(Table.render(report, goals: goals))
      if let path = options.jsonPath {
        try Files.write(JSONReport.render(report, goals: goals), to: path)
        log("wrote \(path)")
      }
      if let path = options.htmlPath {
        try Files.write(HTMLReport.render(report, goals: goals), to: path)
        log("wrote \(path)")
      }
      return 0
    } catch {
      printError("benchmark failed: \(error)")
      return 1
    }
  }
}

// The in-process rescue scenarios start this binary as their rescue workers.
RescueWorkers.runIfRequested()
exit(await Main.run(Array(CommandLine.arguments.dropFirst())))
