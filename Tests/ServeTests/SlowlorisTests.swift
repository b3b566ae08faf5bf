import Foundation
import TestSupport
import TestTraits
import Testing

/// Clients that send a request head slowly, on purpose, to hold connections: each is answered
/// `408` and closed by the head's own deadline or minimum rate, however steadily it trickles, so
/// the server has room for everyone else.
@Suite("attachkit serve: slowloris", .serialized, .threadOfItsOwn)
struct SlowlorisTests {
  /// Sends `step` bytes of an endless request head to every connection each `interval`
  /// seconds until the server has closed them all or `bound` seconds pass; the second, since the
  /// first byte, at which each was closed (nil: still open at the bound) and what it received.
  static func trickle(
    _ connections: [RawConnection], step: Int, interval: Double, bound: Double
  ) async -> [(closedAfter: Double?, text: String)] {
    await onOwnThread {
      let head = Array(
        ("GET /healthz HTTP/1.1\r\nHost: t\r\nX-Pad: " + String(repeating: "p", count: 100_000)).utf8)
      var sent = [Int](repeating: 0, count: connections.count)
      var results = [(closedAfter: Double?, text: String)](repeating: (nil, ""), count: connections.count)
      let start = Date()
      while Date().timeIntervalSince(start) < bound {
        for (index, connection) in connections.enumerated() where results[index].closedAfter == nil {
          let read = connection.readAvailable()
          results[index].text += String(decoding: read.bytes, as: UTF8.self)
          if read.closed {
            results[index].closedAfter = Date().timeIntervalSince(start)
            continue
          }
          let chunk = head[sent[index]..<sent[index] + step]
          _ = chunk.withUnsafeBytes {
            send(connection.descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))
          }
          sent[index] += step
        }
        if results.allSatisfy({ $0.closedAfter != nil }) { break }
        // The pace of the attack; a close by the server wakes the loop at once.
        var fds = connections.enumerated().filter { results[$0.offset].closedAfter == nil }
          .map { pollfd(fd: $0.element.descriptor, events: Int16(POLLIN), revents: 0) }
        _ = poll(&fds, nfds_t(fds.count), Int32(interval * 1000))
      }
      return results
    }
  }

  @Test(
    "25 connections sending a header byte a second (--idle-timeout 2, --max-connections 20) are cut; a new client is served"
  )
  func oneBytePerSecond() async throws {
    let workspace = try Workspace()
    defer { workspace.remove() }
    let serve = try await ServeProcess(
      workspace: workspace, ["--idle-timeout", "2", "--max-connections", "20"])
    defer { serve.stop() }
    let attackers = (0..<25).compactMap { _ in RawConnection(port: serve.port) }
    try #require(attackers.count == 25)
    // At most 10 s of attack whatever happens; the old server held every connection throughout.
    let results = await Self.trickle(attackers, step: 1, interval: 1, bound: 10)
    for (index, result) in results.enumerated() {
      let closed = try #require(result.closedAfter, "connection \(index) still open after 10 s")
      // Cut at the first look after one second below 100 B/s: 1 s, plus the watch's 0.2 s
      // period, plus the trickle's own 1 s step.
      #expect(closed < 1 + 0.2 + 1 + 0.5, "connection \(index) closed after \(closed) s")
      #expect(result.text.hasPrefix("HTTP/1.1 408"), "connection \(index): \(result.text.prefix(40))")
    }
    let fresh = try await Curl.get(serve.url("/healthz"), ["--max-time", "5"])
    #expect(fresh.status == 200)
    #expect(try await serve.metric("attachkit_connections_cut_total{reason=\"too_slow\"}") == 25)
  }

  @Test(
    "a kept-alive connection whose first request was fast and big, trickling its second head a byte a second, is cut as too slow"
  )
  func keptAliveTrickle() async throws {
    let workspace = try Workspace()
    defer { workspace.remove() }
    // The head deadline far past the rate's first verdict: a rate that counted the first
    // request's 7 kB would hold the connection until the deadline and cut it as head_deadline.
    let serve = try await ServeProcess(workspace: workspace, ["--idle-timeout", "5", "--head-timeout", "8"])
    defer { serve.stop() }
    let connection = try #require(RawConnection(port: serve.port))
    connection.send(
      "GET /healthz HTTP/1.1\r\nHost: t\r\nX-Pad: \(String(repeating: "q", count: 7_000))\r\n\r\n")
    let first = await connection.readResponse()
    #expect(first.hasPrefix("HTTP/1.1 200"), "\(first.prefix(40))")
    let result = try #require(await Self.trickle([connection], step: 1, interval: 1, bound: 12).first)
    #expect(result.closedAfter != nil, "still open after 12 s")
    #expect(result.text.hasPrefix("HTTP/1.1 408"), "\(result.text.prefix(40))")
    let tooSlow = try await serve.metric("attachkit_connections_cut_total{reason=\"too_slow\"}")
    let headDeadline = try await serve.metric("attachkit_connections_cut_total{reason=\"head_deadline\"}")
    #expect(tooSlow == 1, "cut as too_slow: \(String(describing: tooSlow))")
    #expect((headDeadline ?? 0) == 0, "cut at the head deadline: \(String(describing: headDeadline))")
  }

  @Test("a head sent fast enough but never finished is cut at --head-timeout after its first byte")
  func headDeadline() async throws {
    let workspace = try Workspace()
    defer { workspace.remove() }
    let serve = try await ServeProcess(workspace: workspace, ["--idle-timeout", "5", "--head-timeout", "2"])
    defer { serve.stop() }
    let connection = try #require(RawConnection(port: serve.port))
    // 40 bytes every 200 ms: 200 B/s, over the 100 B/s minimum, and never idle.
    let result = try #require(await Self.trickle([connection], step: 40, interval: 0.2, bound: 8).first)
    let closed = try #require(result.closedAfter, "still open after 8 s")
    #expect(closed >= 2 - 0.2 && closed < 2 + 0.2 + 0.2 + 0.5, "closed after \(closed) s")
    #expect(result.text.hasPrefix("HTTP/1.1 408"), "\(result.text.prefix(40))")
    #expect(try await serve.metric("attachkit_connections_cut_total{reason=\"head_deadline\"}") == 1)
  }
}
