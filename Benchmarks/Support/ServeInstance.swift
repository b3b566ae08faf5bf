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
    kill(pid, SIGTERM)
    _ = Subprocess.wait(pid)
  }
}
