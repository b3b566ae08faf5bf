import Foundation
import TestSupport
import TestTraits
import Testing

@testable import AttachmentServer

/// The access log standard tools read (issue #26, item 3): JSON lines with an RFC 3339 time,
/// the client address (the forwarded one only from a trusted tier), the user agent, the range,
/// the bytes really sent and a request id echoed in `X-Request-Id`; goaccess parses a real
/// serve's log with docs/deploy.md's command.
@Suite("serve: the access log", .serialized, .threadOfItsOwn)
struct AccessLogTests {
  /// The access lines (not the events) of `serve`'s log.
  static func lines(_ serve: ServeProcess) -> [[String: Any]] {
    serve.events.filter { $0["event"] == nil }
  }

  @Test(
    "a line per request: RFC 3339 time, client, method, route, path, status, bytes, ms, user agent, range, request id"
  )
  func fields() async throws {
    let origin = try TestHTTPServer.start()
    defer { origin.stop() }
    let workspace = try Workspace()
    defer { workspace.remove() }
    let jpeg = try Media.bytes("jpeg-baseline.jpg")
    origin.serve("/f.jpg", body: jpeg, contentType: "image/jpeg")
    let serve = try await ServeProcess(workspace: workspace)
    defer { serve.stop() }
    let path = try await serve.signed(origin.url("/f.jpg"), keyFile: workspace.keyFile)
    let answer = try await Curl.get(serve.url(path), ["-A", "NSE/1.0 (iPhone)", "-H", "Range: bytes=0-99"])
    #expect(answer.status == 206)
    #expect(answer.body.count == 100)
    let id = try #require(answer.header("X-Request-Id"))
    #expect(id.count == 32 && id.allSatisfy(\.isHexDigit))

    #expect(await eventually(within: 30) { Self.lines(serve).count == 1 })
    let line = try #require(Self.lines(serve).first)
    let time = try #require(line["time"] as? String)
    #expect(time.wholeMatch(of: /\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z/) != nil, "\(time)")
    #expect(line["requestId"] as? String == id)
    #expect(line["client"] as? String == "127.0.0.1")
    #expect(line["peer"] as? String == "127.0.0.1")
    #expect(line["forwardedFor"] == nil)
    #expect(line["method"] as? String == "GET")
    #expect(line["route"] as? String == "attachment")
    #expect(line["status"] as? Int == 206)
    #expect(line["bytes"] as? Int == 100)
    #expect(line["userAgent"] as? String == "NSE/1.0 (iPhone)")
    #expect(line["range"] as? String == "bytes=0-99")
    #expect((line["ms"] as? Double ?? -1) >= 0)
    // The path keeps the encoded URL (nothing in it to redact) and drops the signature.
    let parts = path.split(separator: "/")
    #expect(line["path"] as? String == "/v1/a/-/\(parts[3])")
    #expect(!serve.log.contains(String(parts[2])))
  }

  @Test(
    "goaccess, run with docs/deploy.md's command on a real serve's log, parses every request and fails none")
  func goaccessReadsIt() async throws {
    guard let goaccess = Tools.goaccess else {
      try Skips.skipRest("goaccess is not installed (scripts/test.sh installs it)")
    }
    let origin = try TestHTTPServer.start()
    defer { origin.stop() }
    let workspace = try Workspace()
    defer { workspace.remove() }
    origin.serve("/g.jpg", body: try Media.bytes("jpeg-baseline.jpg"), contentType: "image/jpeg")
    origin.serve("/page.html", body: Array("<html></html>".utf8), contentType: "text/html")
    let serve = try await ServeProcess(workspace: workspace, ["--trust-forwarded-from", "127.0.0.1"])
    let path = try await serve.signed(origin.url("/g.jpg"), keyFile: workspace.keyFile)
    let refused = try await serve.signed(origin.url("/page.html"), keyFile: workspace.keyFile)
    let requests: [(String, [String])] = [
      (path, []), (path, ["-H", "Range: bytes=10-"]), (path, ["-I"]),
      (path, ["-H", "X-Forwarded-For: 198.51.100.23"]), (refused, []), ("/healthz", []),
      ("/nowhere?x=1", []), ("/v1/a/zz/%41", []), ("/metrics", ["-A", "Prometheus/2.45.0"]),
    ]
    for (target, options) in requests { _ = try await Curl.get(serve.url(target), options) }
    #expect(await eventually(within: 30) { Self.lines(serve).count == requests.count })
    #expect(await serve.terminate() == 0)

    let command = try DocsDeploy.goaccessCommand()
    let report = workspace.path + "/report.json"
    let script = command.replacingOccurrences(of: "attachkit.log", with: serve.stderrPath)
      .replacingOccurrences(of: "report.json", with: report)
    let run = try await Run.process("/bin/sh", ["-c", script], environment: ["PATH": Tools.path(goaccess)])
    #expect(run.status == 0, "\(run.stderr)")
    let parsed = try #require(
      (try? JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: report))))
        as? [String: Any])
    let general = try #require(parsed["general"] as? [String: Any])
    #expect(general["valid_requests"] as? Int == requests.count)
    #expect(general["failed_requests"] as? Int == 0)
    // The forwarded client is a visitor of its own; the tier's address is the rest.
    let hosts = ((parsed["hosts"] as? [String: Any])?["data"] as? [[String: Any]] ?? []).compactMap {
      $0["data"] as? String
    }
    #expect(Set(hosts) == ["127.0.0.1", "198.51.100.23"], "\(hosts)")
  }

  @Test("a client that closes after 1 MB of an 8 MiB answer is logged with the bytes it got, not the size")
  func abortedDownload() async throws {
    let fixture = try await CachedBigPNG()
    defer { fixture.close() }
    let (serve, path, size) = (fixture.serve, fixture.path, fixture.size)

    let read = try await Self.readThenClose(port: serve.port, path: path, bytes: 1_000_000)
    #expect(read >= 1_000_000)

    #expect(await eventually(within: 30) { SlowReaderTests.fileLines(serve).count == 2 })
    let line = try #require(SlowReaderTests.fileLines(serve).last)
    let logged = try #require(line["bytes"] as? Int)
    #expect(line["completed"] as? Bool == false)
    #expect(logged < size)
    #expect(logged >= read - 64, "logged \(logged), read \(read)")
    // What the client's kernel took on top of what it read: its receive buffer, a few windows.
    #expect(logged <= read + 1_000_000, "logged \(logged), read \(read)")
  }

  @Test("the bytes logged are the body's, exactly: a network answer, a hit, two ranges, a HEAD (none)")
  func bodyBytesExactly() async throws {
    let origin = try TestHTTPServer.start()
    defer { origin.stop() }
    let workspace = try Workspace()
    defer { workspace.remove() }
    let jpeg = try Media.bytes("jpeg-baseline.jpg")
    origin.serve("/b.jpg", body: jpeg, contentType: "image/jpeg")
    let serve = try await ServeProcess(workspace: workspace)
    defer { serve.stop() }
    let url = serve.url(try await serve.signed(origin.url("/b.jpg"), keyFile: workspace.keyFile))
    let requests: [(name: String, options: [String], status: Int, body: Int)] = [
      ("network", [], 200, jpeg.count), ("hit", [], 200, jpeg.count),
      ("range", ["-H", "Range: bytes=10-109"], 206, 100),
      ("suffix range", ["-H", "Range: bytes=-7"], 206, 7),
      ("HEAD", ["-I"], 200, 0),
    ]
    var ids: [String] = []
    for request in requests {
      let answer = try await Curl.get(url, request.options)
      #expect(answer.status == request.status, "\(request.name)")
      if request.name == "HEAD" {
        // curl -I writes the head where the body would go; the head declares the file's length.
        #expect(answer.header("Content-Length") == String(jpeg.count))
      } else {
        #expect(answer.body.count == request.body, "\(request.name)")
      }
      ids.append(try #require(answer.header("X-Request-Id"), "\(request.name)"))
    }
    #expect(await eventually(within: 30) { Self.lines(serve).count == requests.count })
    let logged = Dictionary(
      Self.lines(serve).compactMap { line in
        (line["requestId"] as? String).map { ($0, line["bytes"] as? Int) }
      },
      uniquingKeysWith: { first, _ in first })
    for (request, id) in zip(requests, ids) {
      #expect(logged[id] == request.body, "\(request.name): logged \(String(describing: logged[id]))")
    }
  }

  @Test(
    "a transfer the client cuts is logged with exactly the body bytes its TCP received: the head is not counted"
  )
  func cutTransferExactly() async throws {
    let fixture = try await CachedBigPNG()
    defer { fixture.close() }
    let (serve, path, size) = (fixture.serve, fixture.path, fixture.size)

    let cut = try await Self.stallThenClose(port: serve.port, path: path, reading: 300_000)
    #expect(cut.headBytes > 0 && cut.received > cut.headBytes + 300_000, "\(cut)")

    #expect(await eventually(within: 30) { SlowReaderTests.fileLines(serve).count == 2 })
    let line = try #require(SlowReaderTests.fileLines(serve).last)
    #expect(line["completed"] as? Bool == false)
    // Everything the client's TCP received (and so acknowledged) was the head and body bytes;
    // the server counts what was acknowledged, less the head it wrote.
    let logged = try #require(line["bytes"] as? Int)
    #expect(logged == cut.received - cut.headBytes, "logged \(logged); received \(cut)")
    #expect(logged < size)
  }

  /// serve with an 8 MiB PNG from a test origin, fetched once whole (so cached), for the tests of
  /// transfers a client cuts: its access log then has the whole answer's line first.
  struct CachedBigPNG {
    let origin: TestHTTPServer
    let workspace: Workspace
    let serve: ServeProcess
    /// The signed path of the PNG.
    let path: String
    /// The PNG's size in bytes.
    let size: Int

    init() async throws {
      let origin = try TestHTTPServer.start()
      let workspace: Workspace
      do { workspace = try Workspace() } catch {
        origin.stop()
        throw error
      }
      do {
        let file = workspace.path + "/big.png"
        size = try await SlowReaderTests.bigPNG(at: file)
        origin.serveFile("/big.png", file: file, contentType: "image/png")
        serve = try await ServeProcess(workspace: workspace)
        path = try await serve.signed(origin.url("/big.png"), keyFile: workspace.keyFile)
      } catch {
        workspace.remove()
        origin.stop()
        throw error
      }
      self.origin = origin
      self.workspace = workspace
      do {
        #expect(try await Curl.get(serve.url(path)).body.count == size)  // now cached
      } catch {
        close()
        throw error
      }
    }

    /// Stops serve and the origin and removes the workspace.
    func close() {
      serve.stop()
      workspace.remove()
      origin.stop()
    }
  }

  /// Asks for `path` on a fresh connection with a small receive buffer, reads its head and at
  /// least `reading` body bytes, then stops reading until the transfer has stalled (the
  /// receive buffer full, nothing more received for half a second) and closes the connection
  /// with the rest unread. Returns the head's bytes and every byte the connection's TCP
  /// received (`tcpi_bytes_received`), all of them acknowledged before the close.
  static func stallThenClose(port: Int, path: String, reading: Int) async throws
    -> (headBytes: Int, received: Int)
  {
    let connection = try #require(RawConnection(port: port))
    var small: Int32 = 32 * 1024
    setsockopt(connection.descriptor, SOL_SOCKET, SO_RCVBUF, &small, socklen_t(MemoryLayout<Int32>.size))
    connection.send("GET \(path) HTTP/1.1\r\nHost: t\r\n\r\n")
    let fd = connection.descriptor
    let outcome = await onOwnThread { () -> (headBytes: Int, received: Int)? in
      var pending: [UInt8] = []
      var headBytes = 0
      var total = 0
      var buffer = [UInt8](repeating: 0, count: 16 * 1024)
      let end = ContinuousClock.now + .seconds(20)
      while headBytes == 0 || total - headBytes < reading {
        var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        guard ContinuousClock.now < end, poll(&poller, 1, 1000) >= 0 else { return nil }
        let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
        if count == 0 { return nil }
        guard count > 0 else { continue }
        total += count
        if headBytes == 0 {
          pending += buffer[0..<count]
          if let (_, bodyStart) = SlowReaderTests.head(in: pending) { headBytes = bodyStart }
        }
      }
      // Stalled: what the TCP received stays the same over half a second (the server writes
      // nothing while the window is shut). Any ACK still delayed is then sent at once
      // (TCP_QUICKACK), and the count read again: unchanged, it is what the server saw acknowledged.
      var last = -1
      var steady = 0
      while ContinuousClock.now < end {
        guard let progress = TCPProgress.of(fd) else { return nil }
        let received = Int(progress.received)
        steady = received == last ? steady + 1 : 0
        last = received
        if steady >= 5 {
          var on: Int32 = 1
          setsockopt(fd, Int32(IPPROTO_TCP), TCP_QUICKACK, &on, socklen_t(MemoryLayout<Int32>.size))
          usleep(50_000)
          if let again = TCPProgress.of(fd), Int(again.received) == received {
            return (headBytes, received)
          }
          steady = 0
        }
        usleep(100_000)
      }
      return nil
    }
    return try #require(outcome, "the transfer did not start or did not stall within 20 s")
    // The connection is released (closed, with bytes unread: a reset) here.
  }

  /// Asks for `path` on a connection with a small receive buffer, reads at least `bytes` of
  /// the body, then closes the connection with the rest unread; the body bytes it read.
  static func readThenClose(port: Int, path: String, bytes: Int) async throws -> Int {
    let connection = try #require(RawConnection(port: port))
    var small: Int32 = 32 * 1024
    setsockopt(connection.descriptor, SOL_SOCKET, SO_RCVBUF, &small, socklen_t(MemoryLayout<Int32>.size))
    connection.send("GET \(path) HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n")
    let read = await SlowReaderTests.read(connection, bytesPerSecond: 1e9, stopAfter: bytes, bound: 10)
    return read.body  // the connection is released (closed) here
  }
}

/// Tools the access-log and deployment tests run, where installed.
enum Tools {
  static let goaccess = ["/usr/bin/goaccess", "/usr/local/bin/goaccess"].first {
    FileManager.default.isExecutableFile(atPath: $0)
  }

  /// A `PATH` that finds `tool` and the shell's usual commands.
  static func path(_ tool: String) -> String {
    URL(fileURLWithPath: tool).deletingLastPathComponent().path + ":/usr/bin:/bin"
  }
}

/// The configurations docs/deploy.md gives, read from it so that the tests run what it says.
enum DocsDeploy {
  static let path = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent().appendingPathComponent("docs/deploy.md").path

  enum Missing: Error { case block(String) }

  /// The body of the first fenced block of `language` that contains `marker`.
  static func block(_ language: String, containing marker: String) throws -> String {
    let text = try String(contentsOfFile: path, encoding: .utf8)
    for piece in text.components(separatedBy: "```" + language + "\n").dropFirst() {
      guard let end = piece.range(of: "\n```") else { continue }
      let body = String(piece[..<end.lowerBound]) + "\n"
      if body.contains(marker) { return body }
    }
    throw Missing.block("\(language) block with \(marker)")
  }

  /// The goaccess command of docs/deploy.md (its one line that runs goaccess).
  static func goaccessCommand() throws -> String {
    let block = try block("sh", containing: "goaccess")
    guard let line = block.split(separator: "\n").first(where: { $0.contains("| goaccess") }) else {
      throw Missing.block("goaccess line")
    }
    return String(line)
  }
}
