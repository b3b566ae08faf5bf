import Foundation
import TestSupport
import TestTraits
import Testing

/// docs/deploy.md's systemd unit, checked offline with systemd's own analyzer: it loads
/// (`systemd-analyze verify`) and its exposure stays low (`systemd-analyze security
/// --offline=true --threshold=15`, that is 1.5; it was 8.3 EXPOSED before the hardening).
/// Skipped, saying why, where systemd-analyze is missing or cannot run offline.
@Suite("attachkit serve under systemd (the unit of docs/deploy.md)", .serialized, .threadOfItsOwn)
struct DeploySystemdTests {
  static let analyze = ["/usr/bin/systemd-analyze", "/bin/systemd-analyze"].first {
    FileManager.default.isExecutableFile(atPath: $0)
  }

  /// The documented unit written to `directory`, its `ExecStart` binary replaced by the built
  /// one (verify checks that it is executable).
  static func unitFile(in directory: String) throws -> String {
    let unit = try DocsDeploy.block("ini", containing: "[Service]")
      .replacingOccurrences(of: "/usr/local/bin/attachkit", with: Binaries.attachkit)
    let path = directory + "/attachkit.service"
    try writeTestFile(unit, to: path)
    return path
  }

  @Test(
    "the unit is Type=notify with ExecReload, a system-call filter, capability and address-family limits, UMask"
  )
  func unitSettings() throws {
    let unit = try DocsDeploy.block("ini", containing: "[Service]")
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
}
