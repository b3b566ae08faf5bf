import Foundation
import TestSupport
import TestTraits
import Testing

/// Keys rotate without downtime (issue #26, item 4): SIGHUP re-reads the key file in the same
/// process, a bad file keeps the old keys, a new instance binds the port beside a running one,
/// and a key file others can read is warned about.
@Suite("serve: key reload and restarts", .threadOfItsOwn)
struct ReloadTests {
  /// Reads serve's `time` stamps (RFC 3339, UTC, milliseconds).
  static var logTime: ISO8601DateFormatter {
    let formatter = ISO8601DateFormatter()
    formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
    return formatter
  }

  /// Waits (observed, 30 s bound: a bound on a hang, not a measurement) until `serve` has
  /// logged `count` events named `name`.
  static func logged(_ serve: ServeProcess, _ name: String, count: Int = 1) async -> Bool {
    await eventually(within: 30) { serve.events.filter { $0["event"] as? String == name }.count >= count }
  }

  @Test("SIGHUP loads a new key within 2 s in the same process; a bad key file then keeps the keys in use")
  func sighupReloads() async throws {
    // Given serve with key A, and a URL signed with key B
    let origin = try TestHTTPServer.start()
    defer { origin.stop() }
    origin.serve("/r.gif", body: try Media.bytes("gif-static.gif"), contentType: "image/gif")
    let workspace = try Workspace()
    defer { workspace.remove() }
    try workspace.writeKeys([Workspace.keyA])
    let serve = try await ServeProcess(workspace: workspace)
    defer { serve.stop() }
    let signerB = workspace.path + "/keys-b"
    try workspace.writeKeys([Workspace.keyB], to: signerB)
    let pathB = serve.url(try await serve.signed(origin.url("/r.gif"), keyFile: signerB))
    #expect(try await Curl.get(pathB).status == 403)
    let pid = serve.process.processIdentifier

    // When the key file gains B and serve gets SIGHUP
    try workspace.writeKeys([Workspace.keyB, Workspace.keyA])
    let sent = Date()
    kill(pid, SIGHUP)

    // Then it says so within 2 s (by the event's own time stamp: reading the log is not the
    // reload's time), B verifies, and it is the same process
    #expect(await Self.logged(serve, "keys_reloaded"))
    let reloaded = serve.events.last { $0["event"] as? String == "keys_reloaded" }
    let stamp = try #require(reloaded?["time"] as? String, "the event has no time")
    let reloadedAt = try #require(Self.logTime.date(from: stamp), "not RFC 3339: \(stamp)")
    // (the stamp is in whole milliseconds, so it may read up to 1 ms before the signal)
    #expect(reloadedAt.timeIntervalSince(sent) > -0.002)
    #expect(
      reloadedAt.timeIntervalSince(sent) < 2, "reloaded \(reloadedAt.timeIntervalSince(sent)) s after SIGHUP")
    #expect(try await Curl.get(pathB).status == 200)
    #expect(serve.process.isRunning && serve.process.processIdentifier == pid)

    // When the key file is broken and SIGHUP comes again
    try writeTestFile("not a key\n", to: workspace.keyFile)
    kill(pid, SIGHUP)

    // Then the failure is logged with the path, and B still verifies
    #expect(await Self.logged(serve, "keys_reload_failed"))
    let failure = serve.events.last { $0["event"] as? String == "keys_reload_failed" }
    #expect((failure?["message"] as? String)?.contains(workspace.keyFile) == true)
    #expect(try await Curl.get(pathB).status == 200)
    #expect(serve.process.isRunning)
  }

  @Test(
    "a key removed by a reload stops a target it signed, though that target was just served (and its verification remembered)"
  )
  func removedKeyStopsRememberedTargets() async throws {
    // Given serve with keys A and B, and a URL signed with B served twice (a hit, remembered)
    let origin = try TestHTTPServer.start()
    defer { origin.stop() }
    origin.serve("/m.gif", body: try Media.bytes("gif-static.gif"), contentType: "image/gif")
    let workspace = try Workspace()
    defer { workspace.remove() }
    try workspace.writeKeys([Workspace.keyA, Workspace.keyB])
    let serve = try await ServeProcess(workspace: workspace)
    defer { serve.stop() }
    let signerB = workspace.path + "/keys-b"
    try workspace.writeKeys([Workspace.keyB], to: signerB)
    let pathB = serve.url(try await serve.signed(origin.url("/m.gif"), keyFile: signerB))
    #expect(try await Curl.get(pathB).status == 200)
    #expect(try await Curl.get(pathB).header("X-Attachment-Source") == "cache")

    // When the key file loses B and serve gets SIGHUP
    try workspace.writeKeys([Workspace.keyA])
    kill(serve.process.processIdentifier, SIGHUP)
    #expect(await Self.logged(serve, "keys_reloaded"))

    // Then the same target is refused, and a URL signed with A is served
    #expect(try await Curl.get(pathB).status == 403)
    let pathA = serve.url(try await serve.signed(origin.url("/m.gif"), keyFile: workspace.keyFile))
    #expect(try await Curl.get(pathA).status == 200)
  }

  @Test("a second instance on the port of a running one is refused, naming the reason and --share-port")
  func secondInstanceRefused() async throws {
    let workspace = try Workspace()
    defer { workspace.remove() }
    let first = try await ServeProcess(workspace: workspace, ["--listen", "127.0.0.1:0"])
    defer { first.stop() }
    let second = try await Run.process(
      Binaries.attachkit,
      ["serve", "--listen", "127.0.0.1:\(first.port)", "--key-file", workspace.keyFile])
    #expect(second.status == 2)
    #expect(second.stderr.contains("Cannot listen on 127.0.0.1:\(first.port)"), "\(second.stderr)")
    #expect(second.stderr.contains("Address already in use"), "\(second.stderr)")
    #expect(second.stderr.contains("--share-port"), "\(second.stderr)")
    // The first still answers every request: nothing was split off to a second listener.
    #expect(try await Curl.get(first.url("/healthz")).status == 200)
  }

  @Test(
    "with --share-port on both, a second instance binds the explicit port of a running one, and both answer")
  func secondInstanceShared() async throws {
    let workspace = try Workspace()
    defer { workspace.remove() }
    // An explicit port: with port 0 no reuse is asked for (the kernel could then hand out a
    // port another reuse-port socket holds)
    let port = try Loopback.freePort()
    let first = try await ServeProcess(
      workspace: workspace, ["--listen", "127.0.0.1:\(port)", "--share-port"])
    defer { first.stop() }
    #expect(first.port == port)
    let second = try await ServeProcess(
      workspace: workspace, ["--listen", "127.0.0.1:\(first.port)", "--share-port"])
    defer { second.stop() }
    #expect(second.port == first.port)
    #expect(try await Curl.get(second.url("/healthz")).status == 200)
    // A third without the flag is refused: sharing is opt-in on every side.
    let third = try await Run.process(
      Binaries.attachkit,
      ["serve", "--listen", "127.0.0.1:\(port)", "--key-file", workspace.keyFile])
    #expect(third.status == 2)
  }

  @Test("a key file readable by others is warned about, naming it; one of mode 0600 is not")
  func readableKeyFile() async throws {
    let workspace = try Workspace()
    defer { workspace.remove() }
    try #require(chmod(workspace.keyFile, 0o644) == 0)
    let open = try await ServeProcess(workspace: workspace)
    defer { open.stop() }
    let warning = { (serve: ServeProcess) in
      serve.events.first {
        $0["event"] as? String == "warning" && ($0["message"] as? String)?.contains(workspace.keyFile) == true
      }
    }
    // (written before the "listening" line the harness waited for)
    #expect(warning(open) != nil)
    #expect((warning(open)?["message"] as? String)?.contains("chmod 600") == true)

    try #require(chmod(workspace.keyFile, 0o600) == 0)
    let closed = try await ServeProcess(workspace: workspace)
    defer { closed.stop() }
    #expect(try await Curl.get(closed.url("/healthz")).status == 200)
    #expect(warning(closed) == nil)
  }
}
