import AttachmentKit
import Glibc
import TestSupport

/// The costs issue 12 ("one pass over the bytes") is about, as users meet them:
///
/// - a cache hit through the command line (`attachkit fetch`, a new process) against `curl`
///   downloading the same 100 KiB file from the loopback server;
/// - a cold 45 MiB fetch through the command line, a fresh cache each run, against
///   `curl -s -o FILE` of the same file; and the same fetch into an existing cache (its
///   directories made beforehand, untimed, by `attachkit cache verify`), as a cache that lives
///   between runs meets a new URL;
/// - what sniffing costs when a server sends the body one byte per write: a 64 KiB body that
///   never identifies (so sniffing judges it to the window's end), downloaded with the streaming
///   sniffer against the same download with no inspector.
///
/// Each pair alternates which goes first, in the same run; the ratios are of medians.
enum OnePassScenario {
  /// The report section.
  static let section = "11 one pass (command line and sniffing)"

  /// Runs the three comparisons.
  /// - Throws: ``BenchError`` when a run fails or answers wrongly.
  static func run(_ context: BenchContext, into report: inout Report) async throws {
    if let binary = BatchScenario.commandLineBinary(context), access(binary, X_OK) == 0 {
      setenv("ATTACHKIT_ALLOW_PRIVATE_NETWORKS", "1", 1)  // the server is on loopback
      try commandLineHit(context, binary: binary, into: &report)
      try commandLineCold(context, binary: binary, into: &report)
    } else {
      log("onepass: no attachkit binary next to the benchmark; skipping the command-line runs")
    }
    try await oneByteWrites(context, into: &report)
  }

  /// Times `arguments` as a new process, output to /dev/null.
  private static func timedProcess(_ arguments: [String]) throws -> Duration {
    let devNull = open("/dev/null", O_WRONLY | O_CLOEXEC)
    defer { close(devNull) }
    let start = ContinuousClock.now
    let pid = try Subprocess.spawn(arguments, outputDescriptor: devNull)
    let status = Subprocess.wait(pid)
    let elapsed = ContinuousClock.now - start
    guard status == 0 else { throw BenchError("\(arguments[0]) \(arguments[1]) exited \(status)") }
    return elapsed
  }

  private static func commandLineHit(_ context: BenchContext, binary: String, into report: inout Report)
    throws
  {
    let url = context.server.url(ContentTree.batchPath(0))
    let cache = context.scratch + "/caches/onepass-hit"
    Files.removeTree(cache)
    defer { Files.removeTree(cache) }
    let fetch = [binary, "fetch", "--quiet", "--cache-dir", cache, url]
    _ = try timedProcess(fetch)  // the miss that fills the cache
    let output = context.scratch + "/onepass-curl-hit"
    let curl = ["curl", "-s", "--max-time", "60", "-o", output, url]
    var ours: [Duration] = []
    var theirs: [Duration] = []
    for round in 0..<context.count(full: 101, quick: 21) {
      if round % 2 == 0 { ours.append(try timedProcess(fetch)) }
      theirs.append(try timedProcess(curl))
      if round % 2 == 1 { ours.append(try timedProcess(fetch)) }
    }
    unlink(output)
    addPair(
      &report, ours: ("attachkit fetch, cache hit, 100 KiB (new process)", "cli_hit", ours),
      theirs: ("curl -s -o FILE, same 100 KiB (new process)", "cli_hit_curl", theirs),
      ratio: ("command-line hit / curl downloading the same 100 KiB", "cli_hit_ratio_curl"), goal: 0.33)
  }

  private static func commandLineCold(_ context: BenchContext, binary: String, into report: inout Report)
    throws
  {
    let url = context.server.url(ContentTree.coldPath("45m"))
    let output = context.scratch + "/onepass-curl-45m"
    var ours: [Duration] = []
    var theirs: [Duration] = []
    var existing: [Duration] = []
    for round in 0..<context.count(full: 9, quick: 3) {
      let cache = context.scratch + "/caches/onepass-cold-\(round)"
      Files.removeTree(cache)
      let fetch = [binary, "fetch", "--quiet", "--max-audio-bytes", "50000000", "--cache-dir", cache, url]
      if round % 2 == 0 { ours.append(try timedProcess(fetch)) }
      theirs.append(try timedProcess(["curl", "-s", "--max-time", "60", "-o", output, url]))
      unlink(output)
      if round % 2 == 1 { ours.append(try timedProcess(fetch)) }
      Files.removeTree(cache)
      // The same file into a cache that already exists: only the entry's own files are made.
      let made = try Subprocess.run([binary, "cache", "verify", "--cache-dir", cache])
      guard made.status == 0 else { throw BenchError("attachkit cache verify exited \(made.status)") }
      existing.append(try timedProcess(fetch))
      Files.removeTree(cache)
    }
    addPair(
      &report, ours: ("attachkit fetch, cold 45 MiB, fresh cache (new process)", "cli_cold_45m", ours),
      theirs: ("curl -s -o FILE, same 45 MiB (new process)", "cli_cold_45m_curl", theirs),
      ratio: ("command-line cold 45 MiB / curl -o", "cli_cold_45m_ratio_curl"), goal: 1.0)
    let (mine, peer) = (Distribution(existing), Distribution(theirs))
    report.add(
      section, "attachkit fetch, cold 45 MiB, existing cache (new process)", key: "cli_cold_45m_existing",
      unit: .ms, mine)
    report.addRatio(
      "command-line cold 45 MiB into an existing cache / curl -o", key: "cli_cold_45m_existing_ratio_curl",
      ours: mine.percentile(50), theirs: peer.percentile(50))
  }

  private static func oneByteWrites(_ context: BenchContext, into report: inout Report) async throws {
    let server = try TestHTTPServer.start()
    defer { server.stop() }
    // Noise libmagic calls application/octet-stream: plausible, so sniffing waits to 64 KiB.
    var state: UInt64 = 0x9E37_79B9_7F4A_7C15
    let body = (0..<65_536).map { _ -> UInt8 in
      state ^= state << 13
      state ^= state >> 7
      state ^= state << 17
      return UInt8(truncatingIfNeeded: state)
    }
    server.route("/trickle") { _, writer in
      guard writer.writeHead(status: 200, headers: [("Content-Length", String(body.count))]) else { return }
      for byte in body where !writer.write([byte]) { return }
    }
    var configuration = DownloaderConfiguration()
    configuration.allowPrivateNetworks = true
    let downloader = Downloader(configuration: configuration)
    let directory = context.scratch + "/onepass-trickle"
    try Files.makeDirectory(directory)
    defer { Files.removeTree(directory) }
    var sniffed: [Duration] = []
    var plain: [Duration] = []
    for round in 0..<context.count(full: 9, quick: 3) {
      func withSniffer() async throws {
        let request = DownloadRequest(
          url: server.url("/trickle"), directory: directory, inspector: StreamingSniffer())
        let start = ContinuousClock.now
        do {
          _ = try await downloader.download(request, deadline: generousDeadline())
          throw BenchError("the sniffer accepted 64 KiB of noise")
        } catch let error as AttachmentError where error.code == .unsupportedType {
          sniffed.append(ContinuousClock.now - start)
        }
      }
      if round % 2 == 0 { try await withSniffer() }
      let start = ContinuousClock.now
      let download = try await downloader.download(
        DownloadRequest(url: server.url("/trickle"), directory: directory), deadline: generousDeadline())
      plain.append(ContinuousClock.now - start)
      guard download.bytesReceived == Int64(body.count) else {
        throw BenchError("the plain download got \(download.bytesReceived) bytes")
      }
      download.file.map { _ = unlink($0) }
      if round % 2 == 1 { try await withSniffer() }
    }
    addPair(
      &report,
      ours: ("64 KiB in 1-byte writes, sniffed (refused at the window's end)", "sniff_1byte", sniffed),
      theirs: ("64 KiB in 1-byte writes, no inspector", "sniff_1byte_plain", plain),
      ratio: ("sniffing on a 1-byte-write server: sniffed / plain download", "sniff_1byte_ratio"), goal: 1.1)
  }

  /// Adds both latency rows (name, JSON key, samples) and the ratio of their medians.
  private static func addPair(
    _ report: inout Report, ours: (String, String, [Duration]), theirs: (String, String, [Duration]),
    ratio: (String, String), goal: Double
  ) {
    let (mine, peer) = (Distribution(ours.2), Distribution(theirs.2))
    report.add(section, ours.0, key: ours.1, unit: .ms, mine)
    report.add(section, theirs.0, key: theirs.1, unit: .ms, peer)
    report.addRatio(ratio.0, key: ratio.1, ours: mine.percentile(50), theirs: peer.percentile(50), goal: goal)
  }
}
