import Foundation
import Testing

/// `serve --rescue` makes `attachkit sandbox`'s check before it listens: it refuses a machine
/// that lacks a layer unless told `--rescue-sandbox degraded`, says which layers are missing, and
/// reports each layer in `/metrics`. Its own process is beyond a worker's reach.
@Suite("serve --rescue: the sandbox checked at start", .serialized)
struct SandboxServeTests {
  /// Runs the program after it in a user namespace of its own (root mapped to this user) where
  /// no further user namespace may be made: as in a container whose seccomp profile refuses
  /// them.
  static let noUserNamespaces = [
    "/usr/bin/unshare", "--user", "--map-root-user", "--fork", "--kill-child", "/bin/sh", "-c",
    "echo 0 > /proc/sys/user/max_user_namespaces && exec \"$@\"", "sh",
  ]

  /// Whether this test process (and so the serve it starts) is a sanitizer build, whose workers
  /// run without Landlock and the allow-list (`RescueWorkers.underSanitizer`).
  static var sanitized: Bool {
    dlsym(nil, "__tsan_init") != nil
      || dlsym(nil, "__asan_init") != nil
  }

  @Test("on this machine every layer is in force: serve starts, names none missing, reports each at 1")
  func complete() async throws {
    guard !Self.sanitized else {
      print(
        "SKIPPED: SandboxServeTests.complete: a sanitizer build's workers run without Landlock and the filter"
      )
      return
    }
    let workspace = try Workspace()
    defer { workspace.remove() }
    let serve = try await ServeProcess(workspace: workspace, ["--rescue"])
    defer { serve.stop() }
    let listening = try #require(serve.events.first { $0["event"] as? String == "listening" })
    #expect((listening["sandboxMissingLayers"] as? [String]) == [], "\(listening)")
    for layer in [
      "seccomp-allow-list", "landlock", "user-namespace", "parent-undumpable", "one-job-per-worker",
    ] {
      #expect(try await serve.metric("attachkit_sandbox_layer{layer=\"\(layer)\"}") == 1, "\(layer)")
    }
  }

  @Test(
    "where user namespaces are refused, serve --rescue refuses to start (exit 2), naming the layer and the way out"
  )
  func refusesWithoutDegraded() async throws {
    guard !Self.sanitized else {
      print("SKIPPED: SandboxServeTests.refusesWithoutDegraded: a sanitizer build's serve starts degraded")
      return
    }
    let workspace = try Workspace()
    defer { workspace.remove() }
    let run = try await Run.process(
      Self.noUserNamespaces[0],
      Array(Self.noUserNamespaces.dropFirst()) + [
        Binaries.attachkit, "serve", "--rescue", "--listen", "127.0.0.1:0", "--key-file", workspace.keyFile,
        "--cache-dir", workspace.cache, "--allow-private-networks",
      ])
    #expect(run.status == 2, "\(run.status): \(run.stderr)")
    #expect(run.stderr.contains("user-namespace"), "\(run.stderr)")
    #expect(run.stderr.contains("--rescue-sandbox degraded"), "\(run.stderr)")
    #expect(!run.stderr.contains("\"listening\""), "it listened: \(run.stderr)")
  }

  @Test(
    "with --rescue-sandbox degraded it starts there, names the missing layer when listening and reports it at 0"
  )
  func degraded() async throws {
    let workspace = try Workspace()
    defer { workspace.remove() }
    let serve = try await ServeProcess(
      workspace: workspace, ["--rescue", "--rescue-sandbox", "degraded"], launcher: Self.noUserNamespaces)
    defer { serve.stop() }
    let listening = try #require(serve.events.first { $0["event"] as? String == "listening" })
    let missing = listening["sandboxMissingLayers"] as? [String] ?? []
    #expect(missing.contains("user-namespace"), "\(listening)")
    #expect(try await serve.metric("attachkit_sandbox_layer{layer=\"user-namespace\"}") == 0)
    // (a sanitizer build's workers run without the filter)
    let filter = try await serve.metric("attachkit_sandbox_layer{layer=\"seccomp-allow-list\"}")
    #expect(filter == (Self.sanitized ? 0 : 1))
  }

  @Test(
    "a process of serve's own user can neither open serve's memory for writing nor take its descriptor (serve is undumpable)"
  )
  func parentUnreachableFromItsUser() async throws {
    let workspace = try Workspace()
    defer { workspace.remove() }
    // serve runs as nobody, and so does the attacker: the same user, no capability
    chmod(workspace.path, 0o777)
    chmod(workspace.keyFile, 0o644)
    // (degraded: the attack, not the start's check, is what this test judges)
    let serve = try await ServeProcess(
      workspace: workspace, ["--rescue", "--rescue-sandbox", "degraded"],
      launcher: ["/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"])
    defer { serve.stop() }
    let listening = try #require(serve.events.first { $0["event"] as? String == "listening" })
    let pid = try #require(listening["pid"] as? Int)
    // The attacker: /proc/PID/mem for writing, then pidfd_getfd of serve's descriptor 0
    let attack = """
      import ctypes, os, sys
      pid = int(sys.argv[1])
      try:
          os.close(os.open(f"/proc/{pid}/mem", os.O_RDWR)); print("mem: ALLOWED")
      except OSError as e:
          print("mem: blocked", e.errno)
      libc = ctypes.CDLL(None, use_errno=True)
      pidfd = libc.syscall(434, pid, 0)
      fd = libc.syscall(438, pidfd, 0, 0) if pidfd >= 0 else -1
      print("getfd: ALLOWED" if fd >= 0 else f"getfd: blocked {ctypes.get_errno()}")
      """
    let run = try await Run.process(
      "/usr/bin/setpriv",
      ["--reuid=65534", "--regid=65534", "--clear-groups", "/usr/bin/python3", "-c", attack, "\(pid)"])
    #expect(run.text.contains("mem: blocked"), "\(run.text) \(run.stderr)")
    #expect(run.text.contains("getfd: blocked"), "\(run.text) \(run.stderr)")
  }
}
