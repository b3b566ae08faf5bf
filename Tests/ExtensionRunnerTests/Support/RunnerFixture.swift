import AttachmentKit
import ExtensionRunnerCore
import Foundation
import PosixLock
import TestSupport
import Testing

/// Where the repository's files are, found from this source file (symbolic links resolved).
enum Repository {
  /// The repository root.
  static let root: URL = {
    // …/Tests/ExtensionRunnerTests/Support/RunnerFixture.swift
    URL(fileURLWithPath: #filePath).resolvingSymlinksInPath().deletingLastPathComponent()
      .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
  }()

  /// `Samples/payloads/NAME`.
  static func payload(_ name: String) -> String {
    root.appendingPathComponent("Samples/payloads/\(name)").path
  }

  /// `Samples/media/NAME`.
  static func media(_ name: String) -> String {
    root.appendingPathComponent("Samples/media/\(name)").path
  }

  /// The `extension-runner` binary built next to the test bundle, or `nil` when it is missing.
  static let runnerBinary: String? = {
    var candidates: [String] = []
    if let override = ProcessInfo.processInfo.environment["EXTENSION_RUNNER_BINARY"] {
      candidates.append(override)
    }
    if let executable = Bundle.main.executablePath {
      candidates.append(
        URL(fileURLWithPath: executable).deletingLastPathComponent().path + "/extension-runner")
    }
    candidates.append(Bundle.main.bundleURL.deletingLastPathComponent().path + "/extension-runner")
    candidates.append(root.appendingPathComponent(".build/debug/extension-runner").path)
    return candidates.first { FileManager.default.isExecutableFile(atPath: $0) }
  }()
}

/// What one run of the runner produced.
struct RunResult: Sendable {
  /// The exit status.
  let status: Int32
  /// Standard output.
  let standardOutput: String
  /// Standard error.
  let standardError: String
  /// Standard error as the bytes written (a terminal sees these).
  var standardErrorBytes = Data()
  /// From just before the start to the end of the run.
  let elapsed: Duration
  /// From just before the start to the first byte of standard output: when the content was
  /// delivered, as a reader of the output sees it (`nil` in process, or when nothing came).
  let delivered: Duration?

  /// The elapsed time in milliseconds, for messages and reports.
  var milliseconds: Double { Self.milliseconds(elapsed) }

  /// The delivery time in milliseconds (-1 when unknown), for messages and reports.
  var deliveredMilliseconds: Double { delivered.map(Self.milliseconds) ?? -1 }

  /// A duration in milliseconds, to the microsecond.
  static func milliseconds(_ duration: Duration) -> Double {
    (duration.inMilliseconds * 1000).rounded() / 1000
  }

  /// The delivered content, decoded from standard output.
  func output() throws -> RunnerJSON {
    try JSONDecoder().decode(RunnerJSON.self, from: Data(standardOutput.utf8))
  }

  /// `userInfo` of the delivered content, as Foundation objects.
  func userInfo() throws -> [String: Any] {
    let object = try JSONSerialization.jsonObject(with: Data(standardOutput.utf8))
    return (object as? [String: Any])?["userInfo"] as? [String: Any] ?? [:]
  }
}

/// The JSON the runner prints, as tests read it.
struct RunnerJSON: Decodable, Sendable {
  /// One delivered attachment.
  struct Attachment: Decodable, Sendable, Equatable {
    let identifier: String
    let url: String
    let typeHint: String
    /// Where it came from when not the payload's own URL (`fallback-urls[N]`, `fallback-image`).
    var source: String? = nil
    /// The thumbnail options, when any is set.
    var options: Options? = nil

    /// `attachments[i].options`: iOS's thumbnail option keys without prefix and suffix.
    struct Options: Decodable, Sendable, Equatable {
      struct Rect: Decodable, Sendable, Equatable {
        let x: Double
        let y: Double
        let width: Double
        let height: Double
      }
      var thumbnailClippingRect: Rect? = nil
      var thumbnailTime: Double? = nil
      var thumbnailHidden: Bool? = nil
    }

    /// The local path of the file URL.
    var path: String { URL(string: url)?.path ?? "" }
  }

  /// One trace step.
  struct Step: Decodable, Sendable {
    let name: String
    let startMs: Double
    let endMs: Double?
    let outcome: String
    let detail: String
  }

  let title: String
  let subtitle: String
  let body: String
  let categoryIdentifier: String
  let attachments: [Attachment]
  let trace: [Step]?
}

/// A test server serving `Samples/media` under `/media` (and its fault routes), plus a scratch
/// directory for the cache and the delivered files.
struct RunnerFixture {
  let server: TestHTTPServer
  let scratch: String

  /// Starts the server and makes the scratch directory, named after `label`.
  init(_ label: String) throws {
    server = try TestHTTPServer.start()
    server.serveDirectory(
      prefix: "/media", directory: Repository.root.appendingPathComponent("Samples/media").path)
    scratch =
      FileManager.default.temporaryDirectory.path
      + "/extension-runner-test-\(label)-\(UUID().uuidString.prefix(8))"
    try FileManager.default.createDirectory(atPath: scratch, withIntermediateDirectories: true)
  }

  /// The cache directory runs use.
  var cacheDirectory: String { scratch + "/cache" }
  /// The directory delivered files are copied under.
  var attachmentsDirectory: String { scratch + "/delivered" }

  /// The options every run gets: this fixture's server (on loopback, hence
  /// `--allow-private-networks`), cache and delivery directory.
  var commonArguments: [String] {
    [
      "--base-url", server.baseURL, "--cache-dir", cacheDirectory, "--attachments-dir", attachmentsDirectory,
      "--allow-private-networks",
    ]
  }

  /// Stops the server and removes the scratch directory.
  func close() {
    server.stop()
    try? FileManager.default.removeItem(atPath: scratch)
  }

  /// Writes `text` to a file in the scratch directory and returns its path.
  func write(_ name: String, _ text: String) throws -> String {
    let path = scratch + "/" + name
    try writeTestFile(Data(text.utf8), to: path)
    return path
  }

  /// Runs the built `extension-runner` binary with `arguments` as a child process, in this
  /// process's environment less `ATTACHKIT_ALLOW_PRIVATE_NETWORKS`, plus `environment`; under
  /// `wrapper` (a program and its arguments, e.g. GNU time) when one is given.
  /// Records when the first byte of standard output (the delivery) arrived, and when it exited.
  func runBinary(
    _ arguments: [String], environment extra: [String: String] = [:], wrapper: [String] = []
  ) async throws -> RunResult {
    let runner = try #require(
      Repository.runnerBinary, "extension-runner is not built next to the tests (swift build --build-tests)")
    let binary = wrapper.first ?? runner
    let arguments = wrapper.isEmpty ? arguments : Array(wrapper.dropFirst()) + [runner] + arguments
    let errPath = scratch + "/stderr-\(UUID().uuidString.prefix(8))"
    try writeTestFile(Data(), to: errPath)
    let errHandle = try FileHandle(forWritingTo: URL(fileURLWithPath: errPath))
    defer { try? errHandle.close() }
    let outPipe = Pipe.closingOnExec()
    let process = Process()
    process.executableURL = URL(fileURLWithPath: binary)
    process.arguments = arguments
    process.standardOutput = outPipe
    process.standardError = errHandle
    process.standardInput = FileHandle.nullDevice
    var environment = ProcessInfo.processInfo.environment
    environment["ATTACHKIT_ALLOW_PRIVATE_NETWORKS"] = nil
    environment.merge(extra) { _, new in new }
    process.environment = environment
    let (exits, exitContinuation) = AsyncStream<ContinuousClock.Instant>.makeStream()
    process.terminationHandler = { _ in
      exitContinuation.yield(.now)
      exitContinuation.finish()
    }

    let started = ContinuousClock.now
    try process.runClosingChildEnds()
    let (output, firstByte) = await readToEnd(outPipe.fileHandleForReading.fileDescriptor)
    // The exit as the kernel sees it (a zombie or gone): Foundation's termination handler runs
    // only once it has reaped the child on libdispatch's pool, which a full parallel run kept
    // busy for 19 s after a runner that had exited at 3.6 s.
    while !process.hasEnded { try? await Task.sleep(for: .milliseconds(2)) }
    var ended = ContinuousClock.now
    for await instant in exits { ended = min(ended, instant) }
    process.closeStandardPipes()
    let errorBytes = fileBytes(errPath)
    return RunResult(
      status: process.terminationStatus, standardOutput: String(decoding: output, as: UTF8.self),
      standardError: String(decoding: errorBytes, as: UTF8.self), standardErrorBytes: errorBytes,
      elapsed: ended - started, delivered: firstByte.map { $0 - started })
  }

  /// Runs the runner in this process, through the same entry point the binary uses.
  func runInProcess(_ arguments: [String]) async -> RunResult {
    let out = Locked("")
    let err = Locked("")
    let output = RunnerOutput(
      standardOutput: { text in out.withLock { $0 += text } },
      standardError: { text in err.withLock { $0 += text } })
    let started = ContinuousClock.now
    let status = await RunnerProgram.run(arguments, start: started, output: output)
    let elapsed = ContinuousClock.now - started
    let standardError = err.withLock { $0 }
    return RunResult(
      status: status, standardOutput: out.withLock { $0 }, standardError: standardError,
      standardErrorBytes: Data(standardError.utf8), elapsed: elapsed, delivered: nil)
  }

  /// Whether any request reached the server.
  var requestsReceived: Int { server.totalRequests }
}

/// Reads `descriptor` to its end on a thread of its own; returns the bytes and when the first
/// of them arrived.
func readToEnd(_ descriptor: Int32) async -> (Data, ContinuousClock.Instant?) {
  await withCheckedContinuation { continuation in
    let thread = Thread {
      var data = Data()
      var first: ContinuousClock.Instant?
      var buffer = [UInt8](repeating: 0, count: 64 * 1024)
      while true {
        let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
        if count < 0 && errno == EINTR { continue }
        if count <= 0 { break }
        if first == nil { first = .now }
        data.append(contentsOf: buffer[0..<count])
      }
      continuation.resume(returning: (data, first))
    }
    thread.start()
  }
}

/// The bytes of a file, or empty.
func fileBytes(_ path: String) -> Data {
  FileManager.default.contents(atPath: path) ?? Data()
}
