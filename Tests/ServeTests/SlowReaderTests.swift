import Foundation
import TestSupport
import TestTraits
import Testing

/// Clients that read an answer slowly: one that keeps reading gets the whole file however long
/// it takes, one that stops is cut at the idle timeout, and the access log says how many body
/// bytes each really got.
@Suite("attachkit serve: slow readers", .serialized, .threadOfItsOwn)
struct SlowReaderTests {
  /// A valid 8 MiB PNG (1448 × 1448 RGBA of random bytes, which do not compress), made by
  /// Python's zlib at `path`.
  static func bigPNG(at path: String) async throws -> Int {
    let script = """
      import os, struct, sys, zlib
      w = h = 1448
      raw = b"".join(b"\\x00" + os.urandom(w * 4) for _ in range(h))
      def chunk(t, d):
          return struct.pack(">I", len(d)) + t + d + struct.pack(">I", zlib.crc32(t + d) & 0xffffffff)
      png = b"\\x89PNG\\r\\n\\x1a\\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 6, 0, 0, 0))
      png += chunk(b"IDAT", zlib.compress(raw, 1)) + chunk(b"IEND", b"")
      open(sys.argv[1], "wb").write(png)
      print(len(png))
      """
    let run = try await Run.process("/usr/bin/python3", ["-c", script, path])
    return Int(run.text.trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0
  }

  /// What a paced read of one answer got: the head, the body bytes, and whether the server
  /// closed the connection.
  struct PacedRead {
    var head = ""
    var body = 0
    var closed = false
  }

  /// Reads one answer from `connection` at `bytesPerSecond` until its `Content-Length` is in,
  /// `stopAfter` body bytes are in (then stops reading), the server closes, or `bound` seconds
  /// pass.
  static func read(
    _ connection: RawConnection, bytesPerSecond: Double, stopAfter: Int = .max, bound: Double
  ) async -> PacedRead {
    await onOwnThread {
      var result = PacedRead()
      var buffer = [UInt8](repeating: 0, count: 16 * 1024)
      var pending: [UInt8] = []
      var length = Int.max
      let start = ContinuousClock.now
      let end = start + .seconds(bound)
      while ContinuousClock.now < end, result.body < min(length, stopAfter) {
        // The client's pace: sleep until this many bytes are due (a sleep, not a poll for
        // input, which returns at once while bytes wait and made the loop spin).
        let due = start + .seconds(Double(result.body) / bytesPerSecond)
        let now = ContinuousClock.now
        if due > now { usleep(UInt32(clamping: Int((due - now).inMilliseconds * 1000))) }
        // Then waits for bytes no longer than the bound (the server may have stalled).
        var poller = pollfd(fd: connection.descriptor, events: Int16(POLLIN), revents: 0)
        let left = max(0, (end - ContinuousClock.now).inMilliseconds)
        guard poll(&poller, 1, Int32(left)) > 0 else { break }
        let count = buffer.withUnsafeMutableBytes { recv(connection.descriptor, $0.baseAddress, $0.count, 0) }
        if count <= 0 {
          result.closed = true
          break
        }
        if length == .max {
          // The head is parsed from its bytes: Foundation's string search and trimming took
          // 1.7 s here once in a full parallel run (first use, with other threads busy in it),
          // and a reader that pauses longer than the idle timeout is rightly cut.
          pending += buffer[0..<count]
          guard let (head, bodyStart) = Self.head(in: pending) else { continue }
          result.head = String(decoding: head, as: UTF8.self)
          result.body = pending.count - bodyStart
          length = Self.contentLength(head) ?? 0
        } else {
          result.body += count
        }
      }
      return result
    }
  }

  /// The head's bytes (without its blank line) and where the body starts, once `bytes` hold
  /// the whole head.
  static func head(in bytes: [UInt8]) -> (head: ArraySlice<UInt8>, bodyStart: Int)? {
    let blankLine: [UInt8] = [13, 10, 13, 10]
    guard bytes.count >= 4 else { return nil }
    for end in 0...(bytes.count - 4) where bytes[end..<end + 4].elementsEqual(blankLine) {
      return (bytes[0..<end], end + 4)
    }
    return nil
  }

  /// The `Content-Length` of a head, read from its ASCII bytes.
  static func contentLength(_ head: ArraySlice<UInt8>) -> Int? {
    let name = Array("content-length:".utf8)
    for line in head.split(separator: 10) {
      let lowered = line.map { $0 >= 65 && $0 <= 90 ? $0 + 32 : $0 }
      guard lowered.starts(with: name) else { continue }
      let digits = lowered.dropFirst(name.count).filter { $0 >= 48 && $0 <= 57 }
      return digits.reduce(0) { $0 * 10 + Int($1 - 48) }
    }
    return nil
  }

  /// The access-log lines of the file route.
  static func fileLines(_ serve: ServeProcess) -> [[String: Any]] {
    serve.events.filter { $0["route"] as? String == "attachment" }
  }

  @Test(
    "a client reading an 8 MiB file at 800 kB/s (10 s) through --idle-timeout 1 gets all of it; the log says so"
  )
  func steadyReaderGetsEverything() async throws {
    let origin = try TestHTTPServer.start()
    defer { origin.stop() }
    let workspace = try Workspace()
    defer { workspace.remove() }
    let file = workspace.path + "/big.png"
    let size = try await Self.bigPNG(at: file)
    try #require(size > 8_000_000)
    origin.serveFile("/big.png", file: file, contentType: "image/png")
    // Cached first by an instance without the idle timeout: the miss's check of 8 MB (its
    // inflate) can take over a second on a loaded machine, and this test is about the reader.
    let warm = try await ServeProcess(workspace: workspace)
    let path = try await warm.signed(origin.url("/big.png"), keyFile: workspace.keyFile)
    #expect(try await Curl.get(warm.url(path)).body.count == size)  // now cached
    warm.stop()
    let serve = try await ServeProcess(workspace: workspace, ["--idle-timeout", "1"])
    defer { serve.stop() }

    let reader = try #require(RawConnection(port: serve.port))
    reader.send("GET \(path) HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n")
    let read = await Self.read(reader, bytesPerSecond: 800_000, bound: 25)
    #expect(read.head.hasPrefix("HTTP/1.1 200"))
    #expect(read.body == size)
    #expect(await eventually(within: 30) { Self.fileLines(serve).count == 1 })
    let line = try #require(Self.fileLines(serve).last)
    #expect(line["completed"] as? Bool == true)
    #expect(line["bytes"] as? Int == size)
    // libmicrohttpd wrote for longer than the idle timeout (the last bytes wait in the kernel).
    #expect((line["ms"] as? Double ?? 0) > 1000)
  }

  @Test("a client that stops reading is cut at --idle-timeout; the log counts the bytes it really got")
  func stalledReaderIsCutAndCounted() async throws {
    let origin = try TestHTTPServer.start()
    defer { origin.stop() }
    let workspace = try Workspace()
    defer { workspace.remove() }
    let file = workspace.path + "/big.png"
    let size = try await Self.bigPNG(at: file)
    origin.serveFile("/big.png", file: file, contentType: "image/png")
    let serve = try await ServeProcess(workspace: workspace, ["--idle-timeout", "1"])
    defer { serve.stop() }
    let path = try await serve.signed(origin.url("/big.png"), keyFile: workspace.keyFile)
    #expect(try await Curl.get(serve.url(path)).body.count == size)

    let reader = try #require(RawConnection(port: serve.port))
    // A small receive buffer, so that what the client's kernel takes stays close to what it reads.
    var small: Int32 = 32 * 1024
    setsockopt(reader.descriptor, SOL_SOCKET, SO_RCVBUF, &small, socklen_t(MemoryLayout<Int32>.size))
    reader.send("GET \(path) HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n")
    let first = await Self.read(reader, bytesPerSecond: 10_000_000, stopAfter: 1_000_000, bound: 10)
    #expect(first.body >= 1_000_000)
    // Then it reads nothing: the server's line appears once the watch has cut it.
    #expect(await eventually(within: 30) { Self.fileLines(serve).count == 2 })
    let line = try #require(Self.fileLines(serve).last)
    let rest = await reader.readUntilClosed(idleSeconds: 5)
    let received = first.body + rest.text.utf8.count
    let logged = try #require(line["bytes"] as? Int)
    #expect(line["completed"] as? Bool == false)
    #expect(logged < size)
    #expect(logged >= first.body - 64, "logged \(logged), read \(first.body) before stalling")
    #expect(logged <= received + 64, "logged \(logged), received \(received) in all")
    #expect(try await serve.metric("attachkit_connections_cut_total{reason=\"idle\"}") == 1)
  }
}
