import Foundation
import TestSupport
import TestTraits
import Testing

/// `scripts/install-deps.sh`, the first step of the README's commands: one line saying what it
/// installs, the package manager's output in a log that a failure points to, and nothing at
/// all when everything is installed.
///
/// The script runs for real (bash, `set -euo pipefail`, dpkg-query on this machine's package
/// database); only `apt-get` and `sudo` are stand-ins placed first on `PATH`, since the real
/// ones would need the network and root. The stand-in `apt-get` prints as much as apt and dpkg
/// do on a fresh machine, and records that it ran.
@Suite("scripts/install-deps.sh", .serialized, .threadOfItsOwn)
struct InstallDepsTests {
  /// A directory with the stand-in `apt-get` (exiting `aptStatus`) and `sudo`.
  private struct Stand {
    let scratch: Scratch
    var log: String { scratch.path + "/install.log" }
    var calls: String { scratch.path + "/apt-calls" }

    init(aptStatus: Int) throws {
      scratch = try Scratch()
      let bin = scratch.path + "/bin"
      try FileManager.default.createDirectory(atPath: bin, withIntermediateDirectories: true)
      let apt = """
        #!/bin/sh
        echo "$*" >> '\(calls)'
        for i in $(seq 300); do echo "Unpacking package-$i (1.0) ..."; done
        [ \(aptStatus) -eq 0 ] || echo "E: Unable to locate package attachkit-absent-package"
        exit \(aptStatus)
        """
      try Self.script(apt, at: bin + "/apt-get")
      try Self.script("#!/bin/sh\nexec \"$@\"\n", at: bin + "/sudo")
    }

    private static func script(_ text: String, at path: String) throws {
      try writeTestFile(Data(text.utf8), to: path)
      chmod(path, 0o755)
    }

    /// Runs the script with `extra` packages; its status, standard output and error.
    func run(_ extra: [String]) async throws -> CLI.Result {
      let repository = URL(fileURLWithPath: Media.directory).deletingLastPathComponent()
        .deletingLastPathComponent().path
      let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
      return try await CLI.run(
        program: "/bin/bash", [repository + "/scripts/install-deps.sh"] + extra,
        environment: ["PATH": scratch.path + "/bin:" + path, "ATTACHKIT_INSTALL_LOG": log])
    }
  }

  @Test(
    "nothing missing: no output; a missing package: one line naming it and the log, apt's 300 lines in the log"
  )
  func installsQuietly() async throws {
    let stand = try Stand(aptStatus: 0)
    defer { stand.scratch.remove() }
    let nothing = try await stand.run([])
    #expect(nothing.status == 0, "\(nothing.stderr)")
    #expect(nothing.stdout.isEmpty && nothing.stderr.isEmpty, "\(nothing.stdout)\(nothing.stderr)")
    #expect(
      !FileManager.default.fileExists(atPath: stand.calls), "a package this machine's tests need is missing")

    let result = try await stand.run(["attachkit-absent-package"])
    #expect(result.status == 0, "\(result.stderr)")
    let lines = result.stdout.split(separator: "\n")
    #expect(lines.count == 1, "\(result.stdout)")
    #expect(result.stdout.contains("installing 1 Debian packages: attachkit-absent-package"))
    #expect(result.stdout.contains(stand.log))
    #expect(result.stderr.isEmpty, "\(result.stderr)")
    let log = try String(contentsOfFile: stand.log, encoding: .utf8)
    #expect(log.split(separator: "\n").count >= 600)  // update and install, 300 lines each
    let calls = try String(contentsOfFile: stand.calls, encoding: .utf8)
    #expect(calls.contains("install -y -q --no-install-recommends attachkit-absent-package"))
  }

  @Test("apt-get fails: exit 1, and standard error points to the log and quotes its end")
  func failurePointsToLog() async throws {
    let stand = try Stand(aptStatus: 100)
    defer { stand.scratch.remove() }
    let result = try await stand.run(["attachkit-absent-package"])
    #expect(result.status == 1)
    #expect(result.stdout.split(separator: "\n").count == 1, "\(result.stdout)")
    #expect(result.stderr.contains("apt-get failed; its log is \(stand.log)"), "\(result.stderr)")
    #expect(result.stderr.contains("E: Unable to locate package attachkit-absent-package"))
    #expect(result.stderr.split(separator: "\n").count < 20)
  }
}
