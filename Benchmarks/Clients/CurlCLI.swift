/// The `curl` command line as the other comparison: one process per download
/// (`curl -s -o FILE URL`), and `curl --parallel` over a config file for the batch.
enum CurlCLI {
  /// Runs `curl -s -o file url` and returns the size written.
  /// - Throws: ``BenchError`` when curl fails or writes nothing.
  static func download(_ url: String, to file: String) throws -> Int64 {
    let outcome = try Subprocess.run(["curl", "-s", "--max-time", "60", "-o", file, url])
    guard outcome.status == 0, let size = Files.size(file) else {
      throw BenchError("curl exited \(outcome.status) for \(url)")
    }
    return size
  }

  /// Writes a curl config file (`url` and `output` lines) for `urls`, file `i` of
  /// `directory` for URL `i`, and returns its path.
  /// - Throws: ``BenchError`` when it cannot be written.
  static func writeConfig(_ urls: [String], directory: String) throws -> String {
    var config = ""
    for (index, url) in urls.enumerated() {
      config += "url = \"\(url)\"\noutput = \"\(directory)/\(index)\"\n"
    }
    let path = directory + ".curlrc"
    try Files.write(config, to: path)
    return path
  }

  /// Runs `curl -s --parallel --parallel-max width -K config` and measures it.
  /// - Throws: ``BenchError`` when curl fails.
  @discardableResult
  static func parallel(config: String, width: Int) throws -> Subprocess.Measured {
    let run = try Subprocess.measure([
      "curl", "-s", "--no-progress-meter", "--max-time", "120", "--parallel", "--parallel-max", String(width),
      "-K", config,
    ])
    guard run.status == 0 else { throw BenchError("curl --parallel exited \(run.status)") }
    return run
  }

  /// curl's version line, e.g. `curl 7.88.1 (x86_64-pc-linux-gnu) libcurl/7.88.1 …`.
  static var versionLine: String? { Subprocess.firstLine(of: ["curl", "--version"]) }
}
