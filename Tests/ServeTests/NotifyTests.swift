import Foundation
import TestSupport
import TestTraits
import Testing

/// systemd's `Type=notify` readiness (issue #26, item 6): a real serve process sends `READY=1`
/// once it listens, `RELOADING=1` then `READY=1` around a SIGHUP key reload, and `STOPPING=1`
/// when it drains, as datagrams to the `AF_UNIX` socket `$NOTIFY_SOCKET` names. The test makes
/// that socket itself (a path, and an abstract `@` address) and reads what arrives.
@Suite("serve: systemd notifications", .serialized, .threadOfItsOwn)
struct NotifyTests {
  /// A bound `AF_UNIX` datagram socket, as systemd's notify socket is.
  final class NotifySocket: @unchecked Sendable {
    let descriptor: Int32
    /// The `$NOTIFY_SOCKET` text: the path, or `@` and the abstract name.
    let name: String

    init(name: String) throws {
      self.name = name
      descriptor = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue), 0)
      var address = sockaddr_un()
      address.sun_family = sa_family_t(AF_UNIX)
      var bytes = Array(name.utf8)
      if bytes.first == UInt8(ascii: "@") { bytes[0] = 0 }
      withUnsafeMutableBytes(of: &address.sun_path) { raw in
        for (index, byte) in bytes.enumerated() { raw[index] = byte }
      }
      let length = socklen_t(MemoryLayout<sa_family_t>.size + bytes.count)
      let bound = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, length) }
      }
      guard descriptor >= 0, bound == 0 else { throw SocketError.bind(errno) }
    }

    enum SocketError: Error { case bind(Int32) }

    deinit { close(descriptor) }

    /// The next datagram, waiting (on a thread of its own) at most `seconds`; `nil` if none.
    func next(within seconds: Double = 10) async -> String? {
      await onOwnThread { [self] in
        var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        guard poll(&poller, 1, Int32(seconds * 1000)) == 1 else { return nil }
        var buffer = [UInt8](repeating: 0, count: 4096)
        let count = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
        return count > 0 ? String(decoding: buffer[..<count], as: UTF8.self) : nil
      }
    }
  }

  /// Starts serve under `socket`, then checks the notifications of its start, a reload and a stop.
  static func lifecycle(_ socket: NotifySocket, workspace: Workspace) async throws {
    let serve = try await ServeProcess(workspace: workspace, environment: ["NOTIFY_SOCKET": socket.name])
    defer { serve.stop() }
    let ready = try #require(await socket.next())
    #expect(ready.split(separator: "\n").contains("READY=1"), "\(ready)")
    #expect(ready.contains("MAINPID=\(serve.process.processIdentifier)"))
    #expect(try await Curl.get(serve.url("/healthz")).status == 200)  // ready means it answers

    kill(serve.process.processIdentifier, SIGHUP)
    let reloading = try #require(await socket.next())
    #expect(reloading.split(separator: "\n").contains("RELOADING=1"), "\(reloading)")
    #expect(reloading.contains("MONOTONIC_USEC="))
    let again = try #require(await socket.next())
    #expect(again.split(separator: "\n").contains("READY=1"), "\(again)")
    #expect(await ReloadTests.logged(serve, "keys_reloaded"))

    kill(serve.process.processIdentifier, SIGTERM)
    let stopping = try #require(await socket.next())
    #expect(stopping.split(separator: "\n").contains("STOPPING=1"), "\(stopping)")
    #expect(await serve.process.exitStatus() == 0)
  }

  @Test(
    "a socket at a path: READY=1 once listening, RELOADING=1 and READY=1 around SIGHUP, STOPPING=1 on SIGTERM"
  )
  func pathSocket() async throws {
    let workspace = try Workspace()
    defer { workspace.remove() }
    let socket = try NotifySocket(name: workspace.path + "/notify.sock")
    try await Self.lifecycle(socket, workspace: workspace)
  }

  @Test("an abstract socket (@name), as systemd may pass it: the same notifications")
  func abstractSocket() async throws {
    let workspace = try Workspace()
    defer { workspace.remove() }
    let socket = try NotifySocket(name: "@attachkit-notify-" + UUID().uuidString.prefix(8))
    try await Self.lifecycle(socket, workspace: workspace)
  }

  @Test("without NOTIFY_SOCKET (or with one nobody listens on) serve starts and stops as before")
  func noSocket() async throws {
    let workspace = try Workspace()
    defer { workspace.remove() }
    let serve = try await ServeProcess(
      workspace: workspace, environment: ["NOTIFY_SOCKET": workspace.path + "/nobody.sock"])
    #expect(try await Curl.get(serve.url("/healthz")).status == 200)
    #expect(await serve.terminate() == 0)
  }
}
