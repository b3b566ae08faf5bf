import Foundation
import TestSupport
import TestTraits
import Testing

/// The systemd unit shipped as `docs/attachkit.service`, checked offline with systemd's own
/// analyzer: it loads
/// (`systemd-analyze verify`) and its exposure stays low (`systemd-analyze security
/// --offline=true --threshold=15`, that is 1.5; it was 8.3 EXPOSED before the hardening).
/// Skipped, saying why, where systemd-analyze is missing or cannot run offline.
@Suite("attachkit serve under systemd (the unit of docs/deploy.md)", .serialized, .threadOfItsOwn)
struct DeploySystemdTests {
  static let analyze = ["/usr/bin/systemd-analyze", "/bin/systemd-analyze"].first {
    FileManager.default.isExecutableFile(atPath: $0)
  }

  /// `docs/attachkit.service`, as shipped.
  static func shippedUnit() throws -> String {
    let path = URL(fileURLWithPath: DocsDeploy.path).deletingLastPathComponent()
      .appendingPathComponent("attachkit.service").path
    return try String(contentsOfFile: path, encoding: .utf8)
  }

  /// The shipped unit written to `directory`, its `ExecStart` binary replaced by the built
  /// one (verify checks that it is executable).
  static func unitFile(in directory: String) throws -> String {
    let unit = try shippedUnit()
      .replacingOccurrences(of: "/usr/local/bin/attachkit", with: Binaries.attachkit)
    let path = directory + "/attachkit.service"
    try writeTestFile(unit, to: path)
    return path
  }

  @Test(
    "the unit is Type=notify with ExecReload, a system-call filter, capability and address-family limits, UMask"
  )
  func unitSettings() throws {
    let unit = try Self.shippedUnit()
    for setting in [
      "Type=notify", "ExecReload=/bin/kill -HUP $MAINPID", "SystemCallFilter=@system-service",
      "CapabilityBoundingSet=\n", "RestrictAddressFamilies=AF_INET AF_INET6 AF_UNIX", "UMask=0077",
      "NoNewPrivileges=yes",
    ] {
      #expect(unit.contains(setting), "\(setting)")
    }
  }

  @Test("systemd-analyze verify loads the unit without a complaint")
  func verifies() async throws {
    guard let analyze = Self.analyze else {
      try Skips.skipRest("systemd-analyze is not installed (scripts/test.sh installs systemd)")
    }
    let workspace = try Workspace()
    defer { workspace.remove() }
    let unit = try Self.unitFile(in: workspace.path)
    let run = try await Run.process(analyze, ["verify", unit])
    #expect(run.status == 0, "\(run.stderr)")
    #expect(!run.stderr.contains("attachkit.service:"), "\(run.stderr)")
  }

  @Test("systemd-analyze security --offline=true rates the unit 1.5 or better (it was 8.3 EXPOSED)")
  func exposure() async throws {
    guard let analyze = Self.analyze else {
      try Skips.skipRest("systemd-analyze is not installed (scripts/test.sh installs systemd)")
    }
    let workspace = try Workspace()
    defer { workspace.remove() }
    let unit = try Self.unitFile(in: workspace.path)
    let run = try await Run.process(
      analyze, ["security", "--offline=true", "--threshold=15", "--no-pager", unit])
    if run.text.isEmpty, run.stderr.contains("offline") {
      try Skips.skipRest("this systemd-analyze cannot rate a unit offline: \(run.stderr)")
    }
    let overall = run.text.split(separator: "\n").first { $0.contains("Overall exposure level") } ?? ""
    print("systemd-analyze security: \(overall)")
    #expect(run.status == 0, "\(overall)\n\(run.stderr)")
    let score = overall.split(separator: ":").last?.split(separator: " ").first.flatMap { Double($0) }
    #expect((score ?? 99) <= 1.5, "\(overall)")
  }

  @Test(
    "the unit's ExecStart starts serve as written (its addresses and paths made local); metrics on loopback only"
  )
  func execStartRuns() async throws {
    let unit = try Self.shippedUnit()
    let line = try #require(unit.split(separator: "\n").first { $0.hasPrefix("ExecStart=") })
    let words = line.dropFirst("ExecStart=".count).split(separator: " ").map(String.init)
    #expect(Array(words.prefix(2)) == ["/usr/local/bin/attachkit", "serve"], "\(words)")
    let metrics = words.firstIndex(of: "--metrics-listen").map { words[$0 + 1] }
    #expect(metrics?.hasPrefix("127.0.0.1:") == true, "\(words)")
    // This machine has none of the unit's addresses or directories: each value that names one is
    // made local; every option stays as written, so an unknown one or a bad value fails here.
    let workspace = try Workspace()
    defer { workspace.remove() }
    let local = [
      "--listen": "127.0.0.1:0", "--metrics-listen": "127.0.0.1:0", "--key-file": workspace.keyFile,
      "--cache-dir": workspace.cache,
    ]
    var arguments: [String] = []
    for (index, word) in words.enumerated().dropFirst(2) {
      if index > 2, let value = local[words[index - 1]] {
        arguments.append(value)
      } else {
        arguments.append(word)
      }
    }
    let serve = try await ServeProcess(workspace: workspace, arguments, allowPrivate: false)
    defer { serve.stop() }
    let listening = serve.events.first { $0["event"] as? String == "listening" }
    #expect((listening?["metricsAddress"] as? String)?.hasPrefix("127.0.0.1:") == true, "\(serve.log)")
    #expect(try await Curl.get(serve.url("/metrics")).status == 404)
  }

  @Test(
    "docs/deploy.md's fresh machine: install-serve.sh puts both programs, a mode-600 key and the unit in place, and the unit verifies"
  )
  func freshMachineInstall() async throws {
    let workspace = try Workspace()
    defer { workspace.remove() }
    let root = workspace.path + "/root"
    let binaries = URL(fileURLWithPath: Binaries.attachkit).deletingLastPathComponent().path
    let script = URL(fileURLWithPath: DocsDeploy.path).deletingLastPathComponent().deletingLastPathComponent()
      .appendingPathComponent("scripts/install-serve.sh").path
    // The guide runs the script, not steps of its own that could drift from it.
    #expect(
      try String(contentsOfFile: DocsDeploy.path, encoding: .utf8).contains(
        "scripts/install-serve.sh \"$bin\""))
    let run = try await Run.process("/bin/bash", [script, binaries, "--root", root])
    #expect(run.status == 0, "\(run.stderr)")
    for program in ["attachkit", "attachkit-rescue-worker"] {
      #expect(access(root + "/usr/local/bin/" + program, X_OK) == 0, "\(program)")
    }
    var info = stat()
    #expect(stat(root + "/etc/attachkit/keys", &info) == 0 && info.st_mode & 0o777 == 0o600)
    #expect(stat(root + "/etc/attachkit", &info) == 0 && info.st_mode & 0o777 == 0o700)
    let key = try String(contentsOfFile: root + "/etc/attachkit/keys", encoding: .utf8)
    #expect(key.trimmingCharacters(in: .whitespacesAndNewlines).count == 64)
    #expect(FileManager.default.fileExists(atPath: root + "/etc/systemd/system/attachkit.service"))
    if Self.analyze != nil {
      #expect(run.stderr.contains("systemd-analyze verify"), "\(run.stderr)")
    }
    // Run again: the key is kept, not replaced (signed URLs in flight stay valid).
    let again = try await Run.process("/bin/bash", [script, binaries, "--root", root])
    #expect(again.status == 0, "\(again.stderr)")
    #expect(try String(contentsOfFile: root + "/etc/attachkit/keys", encoding: .utf8) == key)
  }
}
