import Foundation
import PosixLock
import TestSupport

/// The built binaries sit next to the test bundle.
enum Binaries {
  static var directory: String {
    let executable = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? ""
    var directory = URL(fileURLWithPath: executable).deletingLastPathComponent()
    if directory.lastPathComponent.hasSuffix(".xctest") { directory.deleteLastPathComponent() }
    return directory.path
  }

  static var attachkit: String { directory + "/attachkit" }
}

/// A fresh directory for one test, with a key file.
struct Workspace {
  let path: String
  /// Hex keys written by ``writeKeys(_:)``.
  static let keyA = String(repeating: "a1", count: 32)
  static let keyB = String(repeating: "0f", count: 24)
  static let keyC = String(repeating: "7e", count: 16)

  init() throws {
    path = FileManager.default.temporaryDirectory.path + "/attachkit-serve-" + UUID().uuidString.prefix(8)
    try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    try writeKeys([Self.keyA])
  }

  var keyFile: String { path + "/keys" }
  var cache: String { path + "/cache" }

  func writeKeys(_ keys: [String], to file: String? = nil) throws {
    // Replaced whole (a new file renamed over the old), as a configuration manager does: a
    // reload never reads a half-written file.
    let target = file ?? keyFile
    try writeTestFile(
      "# rotation order: the first signs\n" + keys.joined(separator: "\n") + "\n", to: target + ".new")
    guard rename(target + ".new", target) == 0 else {
      throw TestFileError(path: target, description: "cannot rename over \(target)")
    }
  }

  func remove() { try? FileManager.default.removeItem(atPath: path) }

  /// Every regular file under the cache directory, relative to it.
  func cacheFiles() -> [String] {
    let enumerator = FileManager.default.enumerator(atPath: cache)
    var files: [String] = []
    while let name = enumerator?.nextObject() as? String {
      var isDirectory: ObjCBool = false
      if FileManager.default.fileExists(atPath: cache + "/" + name, isDirectory: &isDirectory),
        !isDirectory.boolValue
      {
        files.append(name)
      }
    }
    return files
  }
}

/// Runs a command to completion and captures its output, on a thread of its own (the wait
/// for the child and the reads of its pipes never hold a thread of the cooperative pool).
struct Run {
  let status: Int32
  let stdout: Data
  let stderr: String

  var text: String { String(decoding: stdout, as: UTF8.self) }

  @discardableResult
  static func process(_ path: String, _ arguments: [String], environment: [String: String] = [:])
    async throws -> Run
  {
    try await onOwnThread { () throws -> Run in try run(path, arguments, environment: environment) }
  }

  private static func run(_ path: String, _ arguments: [String], environment: [String: String]) throws
    -> Run
  {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: path)
    process.arguments = arguments
    var env = ProcessInfo.processInfo.environment
    for (key, value) in environment { env[key] = value }
    process.environment = env
    let out = Pipe.closingOnExec()
    let err = Pipe.closingOnExec()
    process.standardOutput = out
    process.standardError = err
    process.standardInput = FileHandle.nullDevice
    try process.runClosingChildEnds()
    let errReader = Thread.detachedRead(err.fileHandleForReading)
    let outData = out.fileHandleForReading.readDataToEndOfFile()
    process.blockUntilExit()
    let errData = errReader.wait()
    process.closeStandardPipes()
    return Run(
      status: process.terminationStatus, stdout: outData, stderr: String(decoding: errData, as: UTF8.self))
  }
}

extension Thread {
  /// Reads a handle to its end on another thread (so two pipes cannot block each other).
  static func detachedRead(_ handle: FileHandle) -> PendingRead {
    let pending = PendingRead()
    let thread = Thread { pending.finish(handle.readDataToEndOfFile()) }
    thread.start()
    return pending
  }
}

/// Data read on another thread.
final class PendingRead: @unchecked Sendable {
  private let condition = NSCondition()
  private var data: Data?

  func finish(_ data: Data) {
    condition.lock()
    self.data = data
    condition.broadcast()
    condition.unlock()
  }

  func wait() -> Data {
    condition.lock()
    defer { condition.unlock() }
    while data == nil { condition.wait() }
    return data ?? Data()
  }
}

/// An HTTP answer as curl saw it.
struct CurlAnswer {
  let status: Int
  let headers: [String: String]
  let body: Data

  func header(_ name: String) -> String? { headers[name.lowercased()] }
  var json: [String: Any]? { (try? JSONSerialization.jsonObject(with: body)) as? [String: Any] }
  var errorCode: String? { (json?["error"] as? [String: Any])?["code"] as? String }
}

/// curl, the real client.
enum Curl {
  static func get(_ url: String, _ options: [String] = []) async throws -> CurlAnswer {
    let headerFile = FileManager.default.temporaryDirectory.path + "/h-" + UUID().uuidString
    defer { try? FileManager.default.removeItem(atPath: headerFile) }
    let run = try await Run.process("/usr/bin/curl", ["-s", "-D", headerFile, "-o", "-"] + options + [url])
    let headerText = (try? String(contentsOfFile: headerFile, encoding: .utf8)) ?? ""
    // The last response's head (curl writes every head it gets).
    let head = headerText.components(separatedBy: "\r\n\r\n").filter { !$0.isEmpty }.last ?? ""
    var lines = head.components(separatedBy: "\r\n")
    let statusLine = lines.isEmpty ? "" : lines.removeFirst()
    let parts = statusLine.split(separator: " ")
    var headers: [String: String] = [:]
    for line in lines {
      guard let colon = line.firstIndex(of: ":") else { continue }
      headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(
        in: .whitespaces)
    }
    return CurlAnswer(status: parts.count > 1 ? Int(parts[1]) ?? 0 : 0, headers: headers, body: run.stdout)
  }
}

/// Python's urllib, a second real client.
enum Urllib {
  /// Requests `url` with `headers`; returns status, headers (lower-cased) and the body's length.
  static func get(
    _ url: String, method: String = "GET", headers: [String: String] = [:]
  ) async throws -> (status: Int, headers: [String: String], bytes: Int) {
    let script = """
      import json, sys, urllib.request, urllib.error
      request = urllib.request.Request(sys.argv[1], headers=json.loads(sys.argv[2]), method=sys.argv[3])
      try:
          response = urllib.request.urlopen(request, timeout=30)
          status, head, body = response.status, response.headers, response.read()
      except urllib.error.HTTPError as error:
          status, head, body = error.code, error.headers, error.read()
      print(json.dumps({"status": status, "headers": {k.lower(): v for k, v in head.items()}, "bytes": len(body)}))
      """
    let headerJSON = String(decoding: try JSONSerialization.data(withJSONObject: headers), as: UTF8.self)
    let run = try await Run.process("/usr/bin/python3", ["-c", script, url, headerJSON, method])
    let object = (try? JSONSerialization.jsonObject(with: run.stdout)) as? [String: Any] ?? [:]
    return (
      object["status"] as? Int ?? 0, object["headers"] as? [String: String] ?? [:],
      object["bytes"] as? Int ?? -1
    )
  }
}

/// A running `attachkit serve`.
final class ServeProcess {
  let process: Process
  let stderrPath: String
  let port: Int

  /// Starts `attachkit serve --listen 127.0.0.1:0` with `arguments` and waits for its
  /// `listening` line (the port it picked).
  /// `launcher` runs serve through another program (its path, then its arguments; serve's path
  /// and arguments follow them), as a test that needs serve in a namespace does.
  init(
    workspace: Workspace, _ arguments: [String] = [], allowPrivate: Bool = true,
    environment: [String: String] = [:], launcher: [String] = []
  ) async throws {
    stderrPath = workspace.path + "/serve-\(UUID().uuidString.prefix(6)).log"
    try writeTestFile([], to: stderrPath)
    process = Process()
    let serve =
      ["serve", "--listen", "127.0.0.1:0", "--key-file", workspace.keyFile, "--cache-dir", workspace.cache]
      + (allowPrivate ? ["--allow-private-networks"] : []) + arguments
    process.executableURL = URL(fileURLWithPath: launcher.first ?? Binaries.attachkit)
    process.arguments = launcher.isEmpty ? serve : Array(launcher.dropFirst()) + [Binaries.attachkit] + serve
    var env = ProcessInfo.processInfo.environment
    env["ATTACHKIT_ALLOW_PRIVATE_NETWORKS"] = "0"
    for (key, value) in environment { env[key] = value }
    process.environment = env
    process.standardOutput = FileHandle.nullDevice
    process.standardError = FileHandle(forWritingAtPath: stderrPath)
    process.standardInput = FileHandle.nullDevice
    try process.runClosingChildEnds()
    var port = 0
    // Observed progress: the line appears, or the process exits.
    while port == 0 && process.isRunning {
      if let line = Self.events(stderrPath).first(where: { $0["event"] as? String == "listening" }),
        let address = line["address"] as? String, let text = address.split(separator: ":").last
      {
        port = Int(text) ?? 0
      } else {
        try? await Task.sleep(for: .milliseconds(5))
      }
    }
    self.port = port
    if port == 0 { throw ServeError.didNotStart(log) }
  }

  enum ServeError: Error { case didNotStart(String) }

  var log: String { (try? String(contentsOfFile: stderrPath, encoding: .utf8)) ?? "" }

  /// The JSON lines of standard error.
  var events: [[String: Any]] { Self.events(stderrPath) }

  static func events(_ path: String) -> [[String: Any]] {
    let text = (try? String(contentsOfFile: path, encoding: .utf8)) ?? ""
    return text.split(separator: "\n").compactMap {
      (try? JSONSerialization.jsonObject(with: Data($0.utf8))) as? [String: Any]
    }
  }

  func url(_ path: String) -> String { "http://127.0.0.1:\(port)\(path)" }

  /// The signed path of `url` from `attachkit sign`.
  func signed(_ url: String, keyFile: String, route: String = "a") async throws -> String {
    try await Run.process(Binaries.attachkit, ["sign", "--key-file", keyFile, "--route", route, url]).text
      .trimmingCharacters(in: .whitespacesAndNewlines)
  }

  /// One metric's value from `/metrics` (the first line that starts with `prefix`).
  func metric(_ prefix: String) async throws -> Double? {
    let text = String(decoding: try await Curl.get(url("/metrics")).body, as: UTF8.self)
    guard
      let line = text.split(separator: "\n").first(where: {
        $0.hasPrefix(prefix + " ") || $0.hasPrefix(prefix + "{") && $0.contains("} ")
      })
    else { return nil }
    return line.split(separator: " ").last.flatMap { Double($0) }
  }

  /// Sends SIGTERM and waits for the exit status.
  @discardableResult
  func terminate() async -> Int32 {
    stop()
    return await process.exitStatus()
  }

  /// The exit status once the process has ended within `seconds` (as the kernel sees it:
  /// ``Foundation/Process/hasEnded``), or `nil` if it has not: read from the kernel while the
  /// child is a zombie (``Foundation/Process/unreapedTerminationStatus``), else from Foundation
  /// once it has reaped it (a loaded parallel run delayed that past 30 s; waited for up to 120 s).
  func exitStatus(endingWithin seconds: Double) async -> Int32? {
    guard await eventually(within: seconds, { process.hasEnded }) else { return nil }
    var status: Int32?
    guard
      await eventually(
        within: 120,
        {
          status = process.unreapedTerminationStatus ?? (process.isRunning ? nil : process.terminationStatus)
          return status != nil
        })
    else { return nil }
    return status
  }

  /// Sends SIGTERM and does not wait: for a `defer`, which cannot await. Foundation reaps the
  /// child when it exits. Through a launcher, serve itself (the pid of its `listening` line) is
  /// signalled too: `unshare --fork` ignores SIGTERM while it waits for its child, so a signal to
  /// the launcher alone left serve and its workers running after the test.
  func stop() {
    if let pid = events.first(where: { $0["event"] as? String == "listening" })?["pid"] as? Int,
      pid != Int(process.processIdentifier), pid > 1
    {
      kill(pid_t(pid), SIGTERM)
    }
    if process.isRunning { kill(process.processIdentifier, SIGTERM) }
  }
}

/// Holds an origin's answers until released, counting the requests that arrived.
final class Gate: Sendable {
  private let open = Locked(false)

  func release() { open.withLock { $0 = true } }

  /// Waits (on the origin's connection thread) until released, or `atMost` seconds from now
  /// when given; `false` if the client left.
  func wait(_ writer: ResponseWriter, atMost seconds: Double? = nil) -> Bool {
    let end = seconds.map { ContinuousClock.now + .milliseconds(Int($0 * 1000)) }
    while !open.withLock({ $0 }) {
      if let end, ContinuousClock.now >= end { return true }
      guard writer.sleep(milliseconds: 2) else { return false }
    }
    return true
  }
}

extension Process {

  /// Waits, on a thread of its own, until `pipe` is read to its end and the process has
  /// exited; what the pipe carried, as text.
  func output(of pipe: Pipe) async -> String {
    await onOwnThread { [self] in
      let data = pipe.fileHandleForReading.readDataToEndOfFile()
      blockUntilExit()
      closeStandardPipes()
      return String(decoding: data, as: UTF8.self)
    }
  }
}

/// Media samples in the repository.
enum Media {
  static let directory: String = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
    .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Samples/media").path

  static func bytes(_ name: String) throws -> [UInt8] {
    Array(try Data(contentsOf: URL(fileURLWithPath: directory + "/" + name)))
  }
}

/// SHA-256 from coreutils' sha256sum, independent of the product's libcrypto calls.
enum SHA256Text {
  static func of(_ bytes: [UInt8]) async -> String {
    let file = FileManager.default.temporaryDirectory.path + "/sha-" + UUID().uuidString
    defer { try? FileManager.default.removeItem(atPath: file) }
    guard (try? writeTestFile(bytes, to: file)) != nil,
      let run = try? await Run.process("/usr/bin/sha256sum", [file])
    else { return "" }
    return String(run.text.prefix(64))
  }
}

/// A child started by ``CleanSpawn`` (empty signal mask, default signal actions; Foundation's
/// `Process` passes the pool thread's blocked signals on), its output to /dev/null.
final class SpawnedProcess {
  let pid: pid_t
  private var reaped = false

  init(_ arguments: [String]) throws {
    let devNull = open("/dev/null", O_WRONLY | O_CLOEXEC)
    defer { if devNull >= 0 { close(devNull) } }
    switch CleanSpawn.start(arguments, output: devNull >= 0 ? devNull : nil, mergeErrors: true) {
    case .success(let pid): self.pid = pid
    case .failure(let failure): throw SpawnError.failed(failure.code)
    }
  }

  enum SpawnError: Error { case failed(Int32) }

  /// Sends SIGTERM and reaps the child (waiting on a thread of its own).
  func terminate() async {
    guard !reaped else { return }
    reaped = true
    kill(pid, SIGTERM)
    await onOwnThread { [pid] in Self.reap(pid) }
  }

  /// Sends SIGTERM and leaves the reaping to a thread of its own: for a `defer`, which cannot
  /// await.
  func stop() {
    guard !reaped else { return }
    reaped = true
    kill(pid, SIGTERM)
    Thread { [pid] in Self.reap(pid) }.start()
  }

  private static func reap(_ pid: pid_t) {
    var status: Int32 = 0
    while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
  }
}
