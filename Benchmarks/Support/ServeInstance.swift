import AttachmentServer
import Glibc
import TestSupport

/// An `attachkit serve` process the benchmarks start: on a free loopback port, with a key file
/// and a cache of its own in `directory`, output discarded. ``stop()`` sends SIGTERM and waits.
final class ServeInstance {
  /// The server's process.
  let pid: pid_t
  /// `http://127.0.0.1:PORT`.
  let base: String
  private let signer: URLSigner
  private var stopped = false

  /// Starts `binary serve` with `arguments` added (after `--allow-private-networks`), keyed by
  /// `key` (hex), and waits (10 s at most) until it listens.
  /// - Throws: ``BenchError`` when it cannot start or does not listen.
  init(binary: String, directory: String, key: String, arguments: [String] = []) throws {
    try Files.makeDirectory(directory)
    try Files.write(key + "\n", to: directory + "/keys")
    signer = try URLSigner(keyFileText: key)
    let port = try Loopback.freePort()
    let devNull = open("/dev/null", O_WRONLY | O_CLOEXEC)
    defer { close(devNull) }
    pid = try Subprocess.spawn(
      [
        binary, "serve", "--listen", "127.0.0.1:\(port)", "--key-file", directory + "/keys", "--cache-dir",
        directory + "/cache", "--allow-private-networks",
      ] + arguments, outputDescriptor: devNull, mergeErrors: true)
    base = "http://127.0.0.1:\(port)"
    guard Loopback.waitUntilListening(port: port, seconds: 10) else {
      stop()
      throw BenchError("attachkit serve \(arguments.joined(separator: " ")) did not listen")
    }
  }

  /// The proxy URL of `url`, signed with the server's key.
  /// - Throws: when the URL cannot be signed.
  func url(for url: String) throws -> String { base + (try signer.path(for: url)) }

  /// SIGTERM, then waits for the process.
  func stop() {
    guard !stopped else { return }
    stopped = true
    kill(pid, SIGTERM)
    _ = Subprocess.wait(pid)
  }

  /// SIGTERM, then waits for the process and returns the CPU time (user + system) it and every
  /// child it waited for used (its rescue workers: serve ends its idle ones before it exits).
  func stopMeasuringCPU() -> Duration {
    guard !stopped else { return .zero }
    stopped = true
    kill(pid, SIGTERM)
    var status: Int32 = 0
    var usage = rusage()
    while wait4(pid, &status, 0, &usage) < 0 && errno == EINTR {}
    return usage.cpu
  }

  /// The value of the metric line that starts with `name` (labels included, as in
  /// `attachkit_worker_jobs_total{job="media"}`) on the server's `/metrics`, or 0 when absent.
  /// - Throws: ``BenchError`` when `curl` cannot run.
  func metric(_ name: String) throws -> Double {
    let text = try Subprocess.run(["curl", "-s", base + "/metrics"], captureOutput: true)
    let line = String(decoding: text.output, as: UTF8.self).split(separator: "\n")
      .first { $0.hasPrefix(name + " ") }
    return line?.split(separator: " ").last.flatMap { Double($0) } ?? 0
  }
}
