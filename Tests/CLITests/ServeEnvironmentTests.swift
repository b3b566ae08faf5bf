import Foundation
import TestSupport
import TestTraits
import Testing

/// `attachkit serve` configured by `ATTACHKIT_…` variables, as a container or a systemd
/// `EnvironmentFile` would: the real binary started, its `listening` event read, then stopped
/// with SIGTERM.
@Suite("attachkit serve from the environment", .serialized, .threadOfItsOwn)
struct ServeEnvironmentTests {
  /// A scratch directory with a key file (0600), and where serve's standard error goes.
  private struct Fixture {
    let scratch: Scratch
    var keyFile: String { scratch.path + "/keys" }
    var log: String { scratch.path + "/serve.log" }

    init() throws {
      scratch = try Scratch()
      try writeTestFile(Data((String(repeating: "ab", count: 32) + "\n").utf8), to: keyFile)
      chmod(keyFile, 0o600)
    }

    /// Starts serve with `arguments` and `environment`, waits for its `listening` event (10 s
    /// at most), stops it with SIGTERM, and returns the event and the exit status.
    func listeningEvent(_ arguments: [String], _ environment: [String: String]) async throws
      -> (event: [String: Any]?, status: Int32)
    {
      let process = try CLI.spawn(
        ["serve"] + arguments, stdout: "/dev/null", stderr: log, environment: environment)
      var event: [String: Any]?
      let deadline = ContinuousClock.now + .seconds(10)
      while event == nil, process.isRunning, ContinuousClock.now < deadline {
        try await Task.sleep(for: .milliseconds(20))
        event = CLI.jsonLines(ofFile: log).first { $0["event"] as? String == "listening" }
      }
      if process.isRunning { kill(process.processIdentifier, SIGTERM) }
      return (event, await process.exitStatus())
    }
  }

  @Test(
    "every setting from ATTACHKIT_ variables: serve listens where ATTACHKIT_LISTEN says, with the key file and cache they name"
  )
  func startsFromTheEnvironment() async throws {
    let fixture = try Fixture()
    defer { fixture.scratch.remove() }
    let environment = [
      "ATTACHKIT_LISTEN": "127.0.0.1:0", "ATTACHKIT_KEY_FILE": fixture.keyFile,
      "ATTACHKIT_CACHE_DIR": fixture.scratch.path + "/cache", "ATTACHKIT_MAX_CONNECTIONS": "16",
      "ATTACHKIT_UNSIGNED": "true",
    ]
    let (event, status) = try await fixture.listeningEvent([], environment)
    let address = try #require(
      event?["address"] as? String, "\((try? String(contentsOfFile: fixture.log, encoding: .utf8)) ?? "")")
    #expect(address.hasPrefix("127.0.0.1:") && address != "127.0.0.1:0")
    #expect(status == 0)
    let log = try String(contentsOfFile: fixture.log, encoding: .utf8)
    #expect(log.contains("--unsigned is on"))  // ATTACHKIT_UNSIGNED=true set the flag
    #expect(FileManager.default.fileExists(atPath: fixture.scratch.path + "/cache"))
  }

  @Test(
    "a key file with one good line and one bad one is refused: exit 2 before listening, by --key-file and ATTACHKIT_KEY_FILE"
  )
  func keyFileWithOneBadLine() async throws {
    let fixture = try Fixture()
    defer { fixture.scratch.remove() }
    let good = String(repeating: "ab", count: 32)
    let files = [
      ("good then bad", "\(good)\nnot-a-key\n", 2), ("bad then good", "# rotation\n0x12zz\n\(good)\n", 2),
    ]
    for (name, text, badLine) in files {
      let path = fixture.scratch.path + "/keys-\(name.replacingOccurrences(of: " ", with: "-"))"
      try writeTestFile(Data(text.utf8), to: path)
      chmod(path, 0o600)
      let cache = ["--listen", "127.0.0.1:0", "--cache-dir", fixture.scratch.path + "/c"]
      for (arguments, environment) in [
        (cache + ["--key-file", path], [:]), (cache, ["ATTACHKIT_KEY_FILE": path]),
      ] {
        // A serve that skipped the bad line would listen (and be stopped here with SIGTERM: 0).
        let (event, status) = try await fixture.listeningEvent(arguments, environment)
        #expect(event == nil, "\(name), \(environment.keys.sorted()): serve listened")
        #expect(status == 2, "\(name), \(environment.keys.sorted()): exit \(status)")
        let log = try String(contentsOfFile: fixture.log, encoding: .utf8)
        #expect(log.contains("Line \(badLine) of the key file"), "\(name): \(log)")
      }
    }
  }

  @Test("the command line wins over a variable; a bad variable is a usage error that names it")
  func commandLineWinsAndBadValuesNamed() async throws {
    let fixture = try Fixture()
    defer { fixture.scratch.remove() }
    let bad = [
      "ATTACHKIT_MAX_CONNECTIONS": "lots", "ATTACHKIT_LISTEN": "nowhere",
      "ATTACHKIT_KEY_FILE": fixture.keyFile,
    ]
    let (event, status) = try await fixture.listeningEvent(
      ["--listen", "127.0.0.1:0", "--max-connections", "8", "--cache-dir", fixture.scratch.path + "/c"], bad)
    #expect(event != nil, "\((try? String(contentsOfFile: fixture.log, encoding: .utf8)) ?? "")")
    #expect(status == 0)

    let refused = try await CLI.run(
      ["serve", "--listen", "127.0.0.1:0", "--cache-dir", fixture.scratch.path + "/c"], environment: bad)
    #expect(refused.status == 2)
    #expect(
      refused.stderr.contains("ATTACHKIT_MAX_CONNECTIONS expects a positive whole number, got 'lots'"),
      "\(refused.stderr)")
    let flag = try await CLI.run(["serve"], environment: ["ATTACHKIT_RESCUE": "sure"])
    #expect(flag.status == 2)
    #expect(
      flag.stderr.contains("ATTACHKIT_RESCUE expects one of 1, true, yes, on, 0, false, no, off; got 'sure'"))
  }

  @Test("serve --help names every option's variable and the default listen address")
  func help() async throws {
    let help = try await CLI.run(["serve", "--help"])
    #expect(help.status == 0)
    #expect(help.stdout.contains("default 127.0.0.1:8080"))
    let options = help.stdout.split(separator: "\n").compactMap { line -> String? in
      guard line.hasPrefix("  -") else { return nil }
      return line.split(separator: " ").first { $0.hasPrefix("--") }.map(String.init)
    }
    #expect(options.count > 10)
    for option in options where option != "--help" {
      let variable = "ATTACHKIT_" + option.dropFirst(2).uppercased().replacingOccurrences(of: "-", with: "_")
      #expect(help.stdout.contains("\n  \(variable) "), "\(variable)")
    }
  }

  @Test(
    "--trust-forwarded-from: ATTACHKIT_TRUST_FORWARDED_FROM, named when bad; in the man page and every completion"
  )
  func trustForwardedFrom() async throws {
    let fixture = try Fixture()
    defer { fixture.scratch.remove() }
    let bad = try await CLI.run(
      ["serve", "--listen", "127.0.0.1:0", "--key-file", fixture.keyFile],
      environment: ["ATTACHKIT_TRUST_FORWARDED_FROM": "10.0.0.0/8,10.0.0.0/33"])
    #expect(bad.status == 2)
    #expect(
      bad.stderr.contains(
        "ATTACHKIT_TRUST_FORWARDED_FROM expects IP addresses or CIDR blocks separated by commas: '10.0.0.0/33' is neither"
      ), "\(bad.stderr)")
    let (event, status) = try await fixture.listeningEvent(
      ["--listen", "127.0.0.1:0", "--cache-dir", fixture.scratch.path + "/c"],
      [
        "ATTACHKIT_KEY_FILE": fixture.keyFile,
        "ATTACHKIT_TRUST_FORWARDED_FROM": "10.0.0.0/8, fd00::/8, 192.0.2.7",
      ])
    #expect(event != nil && status == 0)
    let man = try await CLI.run(["man"])
    #expect(man.stdout.contains("\\fB\\-\\-trust\\-forwarded\\-from\\fR \\fILIST\\fR"))
    for shell in ["bash", "zsh", "fish"] {
      let script = try await CLI.run(["completion", shell])
      #expect(script.stdout.contains("trust-forwarded-from"), "\(shell)")
    }
  }
}
