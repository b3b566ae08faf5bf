import Foundation
import TestSupport
import TestTraits
import Testing

/// Fan-in, limits, slow clients and graceful shutdown, observed through real connections.
@Suite("attachkit serve under load", .serialized, .threadOfItsOwn)
struct LoadTests {
  @Test(
    "200 requests for a new URL, held upstream while they arrive (at least 100 at once), make 1 upstream request, and all get the file"
  )
  func fanIn() async throws {
    let origin = try TestHTTPServer.start()
    defer { origin.stop() }
    let workspace = try Workspace()
    defer { workspace.remove() }
    let jpeg = try Media.bytes("jpeg-progressive.jpg")
    let gate = Gate()
    origin.route("/held.jpg") { _, writer in
      // Held at most 7 s from serve's fetch reaching the origin, on the origin's own clock:
      // libcurl's low-speed window (10 s without a byte) would fail the fetch, and one failure
      // is remembered for 5 s (every request then a 502 at once). The test's own release below
      // can come late on a loaded machine (its last look at the metric is a request too).
      guard gate.wait(writer, atMost: 7) else { return }
      writer.respond(status: 200, headers: [("Content-Type", "image/jpeg")], body: jpeg)
    }
    let serve = try await ServeProcess(workspace: workspace)
    defer { serve.stop() }
    let path = try await serve.signed(origin.url("/held.jpg"), keyFile: workspace.keyFile)

    // When 200 connections are opened first, and then the 200 requests sent in one burst: the
    // requests arrive together however loaded the machine is (curl --parallel, started as a
    // process, once had one request in flight at a time beside two busy loops), and the first
    // one inside starts serve's fetch, and with it the origin's hold.
    let connections = (0..<200).compactMap { _ in RawConnection(port: serve.port) }
    try #require(connections.count == 200, "only \(connections.count) connections opened")
    for connection in connections {
      #expect(connection.send("GET \(path) HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n"))
    }
    // Release the origin once all 200 requests are inside the server (plus the metrics request
    // itself), or after 7 s (the origin lets go by then itself: the held fetch must end before
    // libcurl's low-speed window, 10 s without a byte, fails it). The most seen in flight at
    // once is kept.
    var inflight = 0.0
    let allArrived = try await eventually(within: 6) {
      inflight = max(inflight, try await serve.metric("attachkit_inflight_requests") ?? 0)
      return inflight >= 201
    }
    gate.release()
    var answers: [String: Int] = [:]
    for connection in connections {
      let answer = await connection.readUntilClosed(idleSeconds: 30)
      let head = answer.text.components(separatedBy: "\r\n\r\n").first ?? ""
      let lines = head.components(separatedBy: "\r\n")
      let length = lines.first { $0.lowercased().hasPrefix("content-length:") }
      answers["\(lines.first ?? "") \(length ?? "no length")", default: 0] += 1
    }

    // Then at least 100 were in flight at once, each got the file, and the origin was asked once
    #expect(allArrived || inflight >= 101, "\(inflight) in flight at most")
    #expect(answers == ["HTTP/1.1 200 OK Content-Length: \(jpeg.count)": 200], "answers: \(answers)")
    #expect(origin.requestCount(path: "/held.jpg") == 1)
    #expect(try await serve.metric("attachkit_upstream_requests_total") == 1)
    #expect(try await serve.metric("attachkit_upstream_bytes_total") == Double(jpeg.count))
  }

  @Test("over --max-fetches distinct URLs, and over --max-connections, the answer is 503 overloaded at once")
  func limits() async throws {
    let origin = try TestHTTPServer.start()
    defer { origin.stop() }
    let workspace = try Workspace()
    defer { workspace.remove() }
    let gif = try Media.bytes("gif-static.gif")
    let gate = Gate()
    origin.route("/held.gif") { _, writer in
      guard gate.wait(writer) else { return }
      writer.respond(status: 200, headers: [("Content-Type", "image/gif")], body: gif)
    }
    origin.serve("/other.gif", body: gif, contentType: "image/gif")
    let serve = try await ServeProcess(
      workspace: workspace, ["--max-fetches", "1", "--max-connections", "4"])
    defer { serve.stop() }
    let held = serve.url(try await serve.signed(origin.url("/held.gif"), keyFile: workspace.keyFile))
    let other = serve.url(try await serve.signed(origin.url("/other.gif"), keyFile: workspace.keyFile))

    let waiting = Process()
    waiting.executableURL = URL(fileURLWithPath: "/usr/bin/curl")
    waiting.arguments = ["-s", "-o", "/dev/null", "-w", "%{http_code}", held]
    let waitingOutput = Pipe.closingOnExec()
    waiting.standardOutput = waitingOutput
    try waiting.runClosingChildEnds()
    #expect(await eventually { origin.requestCount(path: "/held.gif") == 1 })

    // One URL is being fetched: another URL is refused, the same URL would join.
    let refused = try await Curl.get(other)
    #expect(refused.status == 503)
    #expect(refused.errorCode == "overloaded")
    #expect(refused.header("Connection") == "close")
    #expect(refused.header("Retry-After") == "1")
    #expect(origin.requestCount(path: "/other.gif") == 0)

    // Connections: the waiting client holds one; three idle keep-alive clients fill the rest.
    let idle = (0..<3).compactMap { _ in RawConnection(port: serve.port) }
    for connection in idle {
      connection.send("GET /healthz HTTP/1.1\r\nHost: t\r\n\r\n")
      #expect(await connection.readResponse().hasPrefix("HTTP/1.1 200"))
    }
    let fifth = try await Curl.get(serve.url("/healthz"))
    #expect(fifth.status == 503)
    #expect(fifth.errorCode == "overloaded")

    gate.release()
    #expect(await waiting.output(of: waitingOutput) == "200")
    #expect(try await eventually { try await Curl.get(other).status == 200 })
  }

  @Test("a slow client is cut at --idle-timeout; an oversized request head is refused and closed")
  func slowAndHugeClients() async throws {
    let workspace = try Workspace()
    defer { workspace.remove() }
    let serve = try await ServeProcess(workspace: workspace, ["--idle-timeout", "1"])
    defer { serve.stop() }

    let slow = try #require(RawConnection(port: serve.port))
    slow.send("GET /healthz HTTP/1.1\r\nHost: t\r\n")
    let start = Date()
    let cut = await slow.readUntilClosed(idleSeconds: 5)
    let elapsed = Date().timeIntervalSince(start)
    #expect(cut.closed)
    #expect(elapsed >= 0.9)
    #expect(elapsed < 2 + deadlineMarginSeconds)  // libmicrohttpd checks idle times once a second

    let huge = try #require(RawConnection(port: serve.port))
    huge.send(
      "GET /healthz HTTP/1.1\r\nHost: t\r\nX-Filler: " + String(repeating: "x", count: 64 * 1024) + "\r\n\r\n"
    )
    let refused = await huge.readUntilClosed(idleSeconds: 5)
    #expect(refused.closed)
    #expect(refused.text.hasPrefix("HTTP/1.1 431"), "\(refused.text.prefix(40))")
    let long = try #require(RawConnection(port: serve.port))
    long.send("GET /" + String(repeating: "x", count: 40 * 1024) + " HTTP/1.1\r\nHost: t\r\n\r\n")
    let tooLong = await long.readUntilClosed(idleSeconds: 5)
    #expect(tooLong.closed)
    #expect(tooLong.text.hasPrefix("HTTP/1.1 414"), "\(tooLong.text.prefix(40))")
    #expect(try await Curl.get(serve.url("/healthz")).status == 200)
  }

  @Test("SIGTERM: no new connections, the request in flight gets its file, exit 0, no temporary file")
  func drainOnSIGTERM() async throws {
    let origin = try TestHTTPServer.start()
    defer { origin.stop() }
    let workspace = try Workspace()
    defer { workspace.remove() }
    let png = try Media.bytes("png-rgba.png")
    let gate = Gate()
    origin.route("/held.png") { _, writer in
      guard gate.wait(writer) else { return }
      writer.respond(status: 200, headers: [("Content-Type", "image/png")], body: png)
    }
    let serve = try await ServeProcess(workspace: workspace)
    let url = serve.url(try await serve.signed(origin.url("/held.png"), keyFile: workspace.keyFile))
    let inFlight = Process()
    inFlight.executableURL = URL(fileURLWithPath: "/usr/bin/curl")
    inFlight.arguments = ["-s", "-o", workspace.path + "/got.png", "-w", "%{http_code}", url]
    let output = Pipe.closingOnExec()
    inFlight.standardOutput = output
    try inFlight.runClosingChildEnds()
    #expect(await eventually { origin.requestCount(path: "/held.png") == 1 })

    kill(serve.process.processIdentifier, SIGTERM)
    #expect(await eventually { serve.events.contains { $0["event"] as? String == "draining" } })
    #expect(await eventually { RawConnection(port: serve.port) == nil })  // the listener is closed
    #expect(serve.process.isRunning)
    gate.release()
    #expect(await inFlight.output(of: output) == "200")
    await serve.process.exitStatus()

    #expect(Array(try Data(contentsOf: URL(fileURLWithPath: workspace.path + "/got.png"))) == png)
    #expect(serve.process.terminationReason == .exit)
    #expect(serve.process.terminationStatus == 0)
    #expect(serve.events.contains { $0["event"] as? String == "stopped" })
    let files = workspace.cacheFiles()
    #expect(files.contains { $0.hasSuffix(".png") && $0.contains("content/") })
    #expect(!files.contains { $0.contains("tmp/") })
  }
}

/// A client's short deadline is its own: it must not cut the fetch other clients share.
@Suite("attachkit serve deadlines", .serialized, .threadOfItsOwn)
struct SharedDeadlineTests {
  @Test("a request with X-Deadline-Ms: 3000 gets 504; one sharing its fetch without it still gets the file")
  func shortDeadlineDoesNotCutSharedFetch() async throws {
    let origin = try TestHTTPServer.start()
    defer { origin.stop() }
    let workspace = try Workspace()
    defer { workspace.remove() }
    let png = try Media.bytes("png-gray.png")
    let gate = Gate()
    origin.route("/held.png") { _, writer in
      guard gate.wait(writer) else { return }
      writer.respond(status: 200, headers: [("Content-Type", "image/png")], body: png)
    }
    let serve = try await ServeProcess(workspace: workspace)
    defer { serve.stop() }
    let path = try await serve.signed(origin.url("/held.png"), keyFile: workspace.keyFile)
    // Both clients are connected beforehand, and every request goes over a raw connection: the
    // patient one joins within milliseconds of the hasty one's fetch reaching the origin, with
    // no client process to start inside the hasty one's deadline.
    let hasty = try #require(RawConnection(port: serve.port))
    let patient = try #require(RawConnection(port: serve.port))
    // 3 s: long enough for the in-flight count below to be seen on a loaded machine (the count
    // can only be seen before the hasty one's 504; with 1 s, a full parallel run once missed it).
    hasty.send("GET \(path) HTTP/1.1\r\nHost: t\r\nX-Deadline-Ms: 3000\r\nConnection: close\r\n\r\n")
    #expect(await eventually { origin.requestCount(path: "/held.png") == 1 })
    patient.send("GET \(path) HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n")
    // Both are seen in flight (with the metrics request itself: 3), asked over raw connections too
    #expect(
      await eventually(within: 5) {
        guard let metrics = RawConnection(port: serve.port) else { return false }
        metrics.send("GET /metrics HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n")
        return await metrics.readUntilClosed(idleSeconds: 5).text.split(separator: "\n")
          .contains("attachkit_inflight_requests 3")
      })
    #expect(await hasty.readUntilClosed(idleSeconds: 5).text.hasPrefix("HTTP/1.1 504"))
    gate.release()
    #expect(await patient.readUntilClosed(idleSeconds: 5).text.hasPrefix("HTTP/1.1 200"))
    #expect(origin.requestCount(path: "/held.png") == 1)
  }
}
