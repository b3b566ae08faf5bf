import Glibc

/// Part of scenario 12 (issue 51): the resident memory of `attachkit serve --rescue` while two
/// transcodes run at once.
///
/// Two different URLs of the same 45 s 720p VP9 + Opus WebM go through `serve` together (two
/// `curl` processes): each is refused as a codec iOS does not play and transcoded in a rescue
/// worker of its own. The figure is the server process's peak resident set (`VmHWM`), sampled
/// once both answers are in: the decoders and encoders live in the workers, so the server holds
/// the two downloads' files, not their frames. Both answers must be 200 and H.264.
enum ServeTranscodeMemory {
  /// Measures and reports `serve_transcodes_rss_mib`.
  /// - Parameters:
  ///   - source: the WebM to transcode (copied twice into the origin's document root).
  ///   - binary: the `attachkit` binary.
  ///   - context: the run (its origin serves the copies; its scratch holds the cache).
  ///   - report: where the figure goes.
  /// - Throws: ``BenchError`` when the server does not start or an answer is not a transcode.
  static func run(
    source: String, binary: String, _ context: BenchContext, into report: inout Report
  ) throws {
    let directory = context.scratch + "/serve-transcodes"
    let serve = try ServeInstance(
      binary: binary, directory: directory, key: String(repeating: "6b", count: 32),
      arguments: ["--rescue", "--deadline", "120"])
    defer { serve.stop() }
    var urls: [String] = []
    for name in ["serve-transcode-a.webm", "serve-transcode-b.webm"] {
      let copied = try Subprocess.run(["cp", source, context.tree.root + "/" + name])
      guard copied.status == 0 else { throw BenchError("cannot copy \(source) into the document root") }
      urls.append(context.server.url("/" + name))
    }
    let devNull = open("/dev/null", O_WRONLY | O_CLOEXEC)
    defer { close(devNull) }
    let clients = try urls.enumerated().map { index, url in
      try Subprocess.spawn(
        [
          "curl", "-s", "-o", directory + "/answer-\(index).mp4", "-w", "%{http_code}",
          try serve.url(for: url),
        ], outputDescriptor: devNull)
    }
    for client in clients {
      guard Subprocess.wait(client) == 0 else { throw BenchError("serve transcodes: curl failed") }
    }
    for index in clients.indices {
      let probe = try Subprocess.run(
        [
          "ffprobe", "-v", "error", "-select_streams", "v:0", "-show_entries", "stream=codec_name", "-of",
          "csv=p=0", directory + "/answer-\(index).mp4",
        ], captureOutput: true)
      let codec = String(decoding: probe.output, as: UTF8.self).split(separator: "\n").first
      guard codec == "h264" else {
        throw BenchError("serve transcodes: answer \(index) is not an H.264 movie (\(codec ?? "nothing"))")
      }
    }
    report.add(
      MediaRescueScenario.section, "attachkit serve --rescue peak RSS, two 720p transcodes at once",
      key: "serve_transcodes_rss_mib", value: Double(ServeScenario.residentPeak(serve.pid)), unit: .mebibytes)
  }
}
