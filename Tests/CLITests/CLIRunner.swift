import Foundation
import TestSupport

/// Runs the built `attachkit` binary (it sits next to the test bundle) as a child process.
enum CLI {
  struct Result {
    let status: Int32
    let stdout: String
    let stderr: String
    /// Whether the process died of a signal (`status` is then the signal's number).
    var signalled = false
    /// Standard output's bytes as written (`stdout` is their UTF-8 decoding).
    var stdoutBytes: [UInt8] = []

    /// The stdout lines parsed as JSON objects.
    var jsonLines: [[String: Any]] {
      stdout.split(separator: "\n").compactMap {
        (try? JSONSerialization.jsonObject(with: Data($0.utf8))) as? [String: Any]
      }
    }
  }

  static var binaryDirectory: String {
    let executable = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? ""
    var directory = URL(fileURLWithPath: executable).deletingLastPathComponent()
    // …/debug/AttachmentKitPackageTests.xctest is the bundle itself on Linux
    if directory.lastPathComponent.hasSuffix(".xctest") { directory.deleteLastPathComponent() }
    return directory.path
  }

  static var attachkit: String { binaryDirectory + "/attachkit" }

  /// Runs `attachkit` with arguments and optional standard input; waits for it on a thread of
  /// its own (the pipes' reads and the wait never hold a thread of the cooperative pool).
  static func run(
    _ arguments: [String], stdin: String? = nil, environment: [String: String] = [:]
  ) async throws -> Result {
    try await run(program: attachkit, arguments, stdin: stdin, environment: environment)
  }

  /// Runs `attachkit` with arguments and these bytes (a file) on standard input.
  static func run(
    _ arguments: [String], stdinBytes: [UInt8], environment: [String: String] = [:]
  ) async throws -> Result {
    try await onOwnThread { () throws -> Result in
      try blockingRun(attachkit, arguments, stdin: Data(stdinBytes), environment: environment)
    }
  }

  /// Runs another program (a shell, a script) the same way, with `environment` added to the
  /// test's own.
  static func run(
    program: String, _ arguments: [String], stdin: String? = nil, environment: [String: String] = [:]
  ) async throws -> Result {
    try await onOwnThread { () throws -> Result in
      try blockingRun(program, arguments, stdin: stdin.map { Data($0.utf8) }, environment: environment)
    }
  }

  private static func blockingRun(
    _ program: String, _ arguments: [String], stdin: Data?, environment: [String: String]
  ) throws -> Result {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: program)
    process.arguments = arguments
    var env = ProcessInfo.processInfo.environment
    env["NO_COLOR"] = "1"
    env["ATTACHKIT_ALLOW_PRIVATE_NETWORKS"] = "1"  // the test server is on loopback
    for (key, value) in environment { env[key] = value }
    process.environment = env
    let out = Pipe.closingOnExec()
    let err = Pipe.closingOnExec()
    let input = Pipe.closingOnExec()
    process.standardOutput = out
    process.standardError = err
    process.standardInput = input
    try process.runClosingChildEnds()
    // (written before any output is read: a child that reads its whole input before it writes,
    // as attachkit does, takes any size; another must not fill its output pipes first)
    // A child that stops before reading it all (a usage error, a spool it cannot create) makes
    // the write fail with EPIPE: the throwing write says so instead of trapping, and the
    // child's answer is what the test judges.
    if let stdin { try? input.fileHandleForWriting.write(contentsOf: stdin) }
    try input.fileHandleForWriting.close()
    let errReader = PendingRead(err.fileHandleForReading)
    let outData = readToEnd(out.fileHandleForReading)
    let errData = errReader.wait()
    process.blockUntilExit()
    process.closeStandardPipes()
    return Result(
      status: process.terminationStatus, stdout: String(decoding: outData, as: UTF8.self),
      stderr: String(decoding: errData, as: UTF8.self),
      signalled: process.terminationReason == .uncaughtSignal, stdoutBytes: Array(outData))
  }
}

/// Everything `handle` yields until its end, read with read(2) and retried on EINTR (Foundation's
/// `readDataToEndOfFile` trapped once on an interrupted read under load); stops at an error.
func readToEnd(_ handle: FileHandle) -> Data {
  var data = Data()
  var buffer = [UInt8](repeating: 0, count: 65_536)
  while true {
    let count = buffer.withUnsafeMutableBytes { read(handle.fileDescriptor, $0.baseAddress, $0.count) }
    if count > 0 {
      data.append(contentsOf: buffer[0..<count])
    } else if count < 0 && errno == EINTR {
      continue
    } else {
      return data
    }
  }
}

/// A handle read to its end on a thread of its own, so that two pipes cannot block each
/// other (a child filling its stderr pipe while the reader waits on stdout).
final class PendingRead: @unchecked Sendable {
  private let condition = NSCondition()
  private var data: Data?  // guarded by `condition`

  init(_ handle: FileHandle) {
    Thread { [self] in finish(readToEnd(handle)) }.start()
  }

  private func finish(_ data: Data) {
    condition.lock()
    self.data = data
    condition.broadcast()
    condition.unlock()
  }

  /// Blocks until the read is done: call it only off the cooperative pool.
  func wait() -> Data {
    condition.lock()
    defer { condition.unlock() }
    while data == nil { condition.wait() }
    return data ?? Data()
  }
}

/// A fresh directory for one test.
struct Scratch {
  let path: String
  init() throws {
    path = FileManager.default.temporaryDirectory.path + "/attachkit-cli-" + UUID().uuidString.prefix(8)
    try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
  }
  func remove() { try? FileManager.default.removeItem(atPath: path) }
}

enum Media {
  static let directory: String = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
    .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Samples/media").path

  static func bytes(_ name: String) throws -> [UInt8] {
    Array(try Data(contentsOf: URL(fileURLWithPath: directory + "/" + name)))
  }
}

extension CLI {
  /// Starts `attachkit` with stdout and stderr going to files (no pipe can fill up), and
  /// returns the running process.
  /// `environment` is added to the test's own.
  static func spawn(
    _ arguments: [String], stdout: String, stderr: String = "/dev/null", environment: [String: String] = [:]
  ) throws -> Process {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: attachkit)
    process.arguments = arguments
    var env = ProcessInfo.processInfo.environment
    env["ATTACHKIT_ALLOW_PRIVATE_NETWORKS"] = "1"  // the test server is on loopback
    for (key, value) in environment { env[key] = value }
    process.environment = env
    try? writeTestFile([], to: stdout)
    if stderr != "/dev/null" { try? writeTestFile([], to: stderr) }
    process.standardOutput = FileHandle(forWritingAtPath: stdout)
    process.standardError =
      stderr == "/dev/null" ? FileHandle.nullDevice : FileHandle(forWritingAtPath: stderr)
    process.standardInput = FileHandle.nullDevice
    try process.runClosingChildEnds()
    return process
  }

  /// The JSON objects of a JSON-lines file.
  /// Sends `process` SIGINT (Ctrl-C) and waits for it to exit, on a thread of its own (never the
  /// cooperative pool's); returns the seconds from the signal to the exit.
  static func interrupt(_ process: Process) async -> Double {
    await onOwnThread { [process] () -> Double in
      let interruptedAt = Date()
      kill(process.processIdentifier, SIGINT)
      process.blockUntilExit()
      process.closeStandardPipes()
      return Date().timeIntervalSince(interruptedAt)
    }
  }

  static func jsonLines(ofFile path: String) -> [[String: Any]] {
    let text = (try? String(contentsOfFile: path, encoding: .utf8)) ?? ""
    return text.split(separator: "\n").compactMap {
      (try? JSONSerialization.jsonObject(with: Data($0.utf8))) as? [String: Any]
    }
  }
}
