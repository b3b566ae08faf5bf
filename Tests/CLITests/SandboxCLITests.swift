import Foundation
import Testing

/// `attachkit sandbox`: every attack tried from inside a real rescue worker (started as every
/// rescue starts one) is blocked, the parent sees nothing of it, and a machine that refuses a
/// layer is told so. One check at a time: each starts some thirty workers.
@Suite("The rescue workers' sandbox, checked from inside a worker", .serialized)
struct SandboxCLITests {
  /// The report as JSON: layers by name, probes by name.
  struct Report {
    var complete: Bool
    var layers: [String: Bool]
    var probes: [String: (blocked: Bool, detail: String)]
    var missing: [String]

    init?(_ result: CLI.Result) {
      guard let object = result.jsonLines.first, let complete = object["complete"] as? Bool else {
        return nil
      }
      self.complete = complete
      layers = [:]
      for layer in object["layers"] as? [[String: Any]] ?? [] {
        if let name = layer["layer"] as? String { layers[name] = layer["in_force"] as? Bool ?? false }
      }
      probes = [:]
      for probe in object["probes"] as? [[String: Any]] ?? [] {
        if let name = probe["probe"] as? String {
          probes[name] = (
            blocked: probe["blocked"] as? Bool ?? false, detail: probe["detail"] as? String ?? ""
          )
        }
      }
      missing = object["missing_layers"] as? [String] ?? []
    }
  }

  @Test(
    "every probe of the review's table is blocked from inside a worker (the parent's memory, a descriptor only it holds, its key file, a file created, a signal, the terminal), and every layer is in force"
  )
  func everyProbeBlocked() async throws {
    let scratch = try Scratch()
    defer { scratch.remove() }
    // A mode-600 key file of the parent's user, as serve's --key-file
    let key = scratch.path + "/keys"
    try "k1 SECRET-SIGNING-KEY\n".write(toFile: key, atomically: false, encoding: .utf8)
    chmod(key, 0o600)
    let result = try await CLI.run(["sandbox", "--json", "--key-file", key])
    let report = try #require(Report(result), "no report: \(result.stdout) \(result.stderr)")
    for probe in [
      "parent-memory", "parent-descriptor", "key-file", "system-file", "write-file", "signal-queue",
      "pidfd-signal", "kill", "tgkill", "terminal", "execve", "fork", "socket", "connect", "ptrace",
      "process-vm-write", "unshare", "mount", "raise-limit", "thread-socket", "bpf", "perf-event-open",
      "io-uring-setup", "fsopen", "open-tree", "move-mount", "open-by-handle-at", "delete-module",
      "kexec-file-load", "iopl", "executable-memory",
      // what the parent saw afterwards: its buffer unchanged, no file, no signal
      "parent-memory-unchanged", "no-file-created", "no-signal-received",
    ] {
      let outcome = try #require(report.probes[probe], "probe \(probe) missing from the report")
      #expect(outcome.blocked, "\(probe): \(outcome.detail)")
    }
    // and where the filter is the layer that answers, it answers itself (the kill), not a
    // layer behind it: allowing execve would still meet Landlock's EACCES, and raising a limit
    // the hard limit's EPERM, and the probe would pass with the filter's rule gone
    for probe in [
      "parent-descriptor", "signal-queue", "pidfd-signal", "kill", "tgkill", "terminal", "execve", "fork",
      "connect", "ptrace", "process-vm-write", "unshare", "mount", "raise-limit", "bpf", "perf-event-open",
      "io-uring-setup", "fsopen", "open-tree", "move-mount", "open-by-handle-at", "delete-module",
      "executable-memory",
    ] {
      let detail = report.probes[probe]?.detail ?? "missing"
      #expect(detail == "killed by the seccomp filter (SIGSYS)", "\(probe): \(detail)")
    }
    // and every layer is in force on this machine
    for layer in [
      "seccomp-allow-list", "seccomp-every-thread", "landlock", "user-namespace", "pid-namespace",
      "network-namespace", "ipc-namespace", "mount-namespace", "unprivileged-user", "session",
      "parent-undumpable", "cpu-hard-limit", "file-size-hard-limit", "process-limit", "descriptor-limit",
      "no-core-file", "one-job-per-worker",
    ] {
      #expect(report.layers[layer] == true, "\(layer) not in force: \(result.stdout)")
    }
    #expect(report.complete && result.status == 0, "\(result.stdout)")
  }

  @Test("reused workers (--worker-jobs 2) are reported: no Landlock, not one job per worker, exit 1")
  func reuseIsNamed() async throws {
    let result = try await CLI.run(["sandbox", "--json", "--worker-jobs", "2"])
    let report = try #require(Report(result), "no report: \(result.stdout) \(result.stderr)")
    #expect(report.missing.contains("landlock") && report.missing.contains("one-job-per-worker"))
    #expect(result.status == 1)
  }

  @Test(
    "where user namespaces are refused (a user namespace whose max_user_namespaces is 0), the missing layer is named and the exit is 1"
  )
  func refusedUserNamespaces() async throws {
    // unshare -r makes this process root of a user namespace of its own; inside, no further
    // user namespace may be made, as in a container whose seccomp profile refuses them
    let script = "echo 0 > /proc/sys/user/max_user_namespaces && exec \"$0\" sandbox --json"
    let result = try await CLI.run(
      program: "/usr/bin/unshare",
      ["--user", "--map-root-user", "--fork", "/bin/sh", "-c", script, CLI.attachkit])
    let report = try #require(Report(result), "no report: \(result.stdout) \(result.stderr)")
    #expect(report.missing.contains("user-namespace"), "\(result.stdout)")
    #expect(!report.complete && result.status == 1)
    // and the probes still run in what the machine grants: nothing gets through the filter
    #expect(report.probes["socket"]?.blocked == true && report.probes["execve"]?.blocked == true)
  }

  @Test("under a terminal (script), the worker injects nothing: the shell's next read gets no character")
  func nothingInjectedIntoTheTerminal() async throws {
    let command =
      "\(CLI.attachkit) sandbox >/dev/null 2>&1; status=$?; if read -t 1 line; then echo \"INJECTED:[$line]\"; fi; echo \"status=$status\""
    let result = try await CLI.run(program: "/usr/bin/script", ["-qec", command, "/dev/null"])
    #expect(!result.stdout.contains("INJECTED"), "\(result.stdout)")
    #expect(result.stdout.contains("status=0"), "\(result.stdout)")
  }
}
