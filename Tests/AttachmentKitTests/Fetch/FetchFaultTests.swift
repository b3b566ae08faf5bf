import CCurl
import Foundation
import TestSupport
import TestTraits
import Testing

@testable import AttachmentKit

/// Every network fault gets its own error code, within the deadline plus 250 ms, and leaves no
/// temporary file behind.
@Suite("Downloader: faults", .threadOfItsOwn)
struct FetchFaultTests {
  /// One fault case: a path on the test server, the code it must give, and the deadline.
  struct Fault: CustomTestStringConvertible, Sendable {
    let path: String
    let code: AttachmentError.Code
    var timeout: Duration = .seconds(3)
    var maximumBodyBytes: Int64? = nil
    var lowSpeed: DownloaderConfiguration.LowSpeedLimit? = nil
    var conditional = false
    var testDescription: String { "\(path) → \(code.rawValue)" }
  }

  static let faults: [Fault] = [
    Fault(path: "/fault/never", code: .deadlineExceeded, timeout: .seconds(1)),
    Fault(path: "/fault/trickle", code: .deadlineExceeded, timeout: .milliseconds(1500)),
    Fault(
      path: "/fault/trickle", code: .tooSlow, timeout: .seconds(4),
      lowSpeed: .init(bytesPerSecond: 100, window: .seconds(1))),
    Fault(path: "/fault/close-mid-body", code: .truncated),
    Fault(path: "/fault/short-body", code: .truncated),
    Fault(path: "/fault/redirect-self", code: .tooManyRedirects),
    Fault(path: "/redirect/5/files/a", code: .tooManyRedirects),
    Fault(path: "/fault/redirect-file", code: .unsupportedScheme),
    Fault(path: "/fault/redirect-ftp", code: .unsupportedScheme),
    Fault(path: "/fault/chunked-forever", code: .tooLarge, maximumBodyBytes: 1 << 20),
    Fault(path: "/fault/huge-length", code: .tooLarge),
    Fault(path: "/status/404", code: .httpStatus),
    Fault(path: "/status/500", code: .httpStatus),
    Fault(path: "/fault/empty", code: .empty),
    Fault(path: "/fault/huge-headers", code: .headersTooLarge),
    Fault(path: "/fault/not-modified-always", code: .httpStatus),
    Fault(path: "/fault/slow-headers", code: .deadlineExceeded, timeout: .seconds(1)),
  ]

  @Test("each fault gets its code in time and leaves nothing behind", arguments: faults)
  func fault(_ fault: Fault) async throws {
    // Given the fault server and a downloader with the case's limits
    let server = try TestHTTPServer.start()
    defer { server.stop() }
    server.serve("/files/a", body: Array("hello".utf8))
    let scratch = try ScratchDirectory("fault")
    defer { scratch.remove() }
    var configuration = DownloaderConfiguration.loopback
    if let lowSpeed = fault.lowSpeed { configuration.lowSpeedLimit = lowSpeed }
    let downloader = Downloader(configuration: configuration)
    var request = DownloadRequest(url: server.url(fault.path), directory: scratch.path)
    request.maximumBodyBytes = fault.maximumBodyBytes

    // When it is downloaded
    let start = ContinuousClock.now
    let outcome: Result<Download, AttachmentError>
    do {
      outcome = .success(try await downloader.download(request, deadline: start + fault.timeout))
    } catch {
      outcome = .failure(error)
    }
    let elapsed = ContinuousClock.now - start

    // Then it fails with the expected code, within the deadline plus 250 ms, leaving no file
    switch outcome {
    case .success(let download):
      if let file = download.file { unlink(file) }
      Issue.record("expected \(fault.code.rawValue), got success with status \(download.status)")
    case .failure(let error):
      #expect(error.code == fault.code, "\(error)")
      if fault.code == .httpStatus {
        #expect(error.httpStatus != nil)
      }
    }
    let milliseconds = elapsed.inMilliseconds
    let got = outcome.failureCode?.rawValue ?? "success"
    print("fault \(fault.path): \(got) after \(Int(milliseconds.rounded())) ms (deadline \(fault.timeout))")
    #expect(elapsed <= fault.timeout + deadlineMargin)
    #expect(scratch.leftovers().isEmpty)
  }

  @Test(
    "a 404's status, and a declared length over the limit, are refused from the head: the client leaves before any body byte",
    arguments: [
      (404, "1048576", AttachmentError.Code.httpStatus),
      (200, "1000000000000", AttachmentError.Code.tooLarge),
    ])
  func refusedFromTheHead(status: Int, declaredLength: String, code: AttachmentError.Code) async throws {
    // Given a route that sends only the head, then waits for the client to hang up: its body
    // would come only once the client asked for it by waiting, so a client that decides from
    // the head alone is the only one that can finish before the deadline.
    let server = try TestHTTPServer.start()
    defer { server.stop() }
    let hungUp = Flag()
    server.route("/head-only") { _, writer in
      _ = writer.writeHead(
        status: status, headers: [("Content-Type", "text/html"), ("Content-Length", declaredLength)])
      writer.waitForClientToClose()
      hungUp.set()
    }
    let scratch = try ScratchDirectory("head")
    defer { scratch.remove() }

    // When it is downloaded with a 1 MiB body limit
    var request = DownloadRequest(url: server.url("/head-only"), directory: scratch.path)
    request.maximumBodyBytes = 1 << 19
    var caught: AttachmentError?
    do {
      _ = try await Downloader(configuration: .loopback).download(request, timeout: generousTimeout)
    } catch {
      caught = error
    }

    // Then it is refused with its code and status, and the server saw the client leave
    #expect(caught?.code == code, "\(String(describing: caught))")
    if code == .httpStatus {
      #expect(caught?.httpStatus == 404)
      #expect(caught?.detected == "text/html")
    }
    #expect(await hungUp.wait(upTo: eventWait), "the client never hung up")
    #expect(scratch.leftovers().isEmpty)
  }

  @Test("URLs that are not http(s) or not URLs fail before any connection")
  func badURLs() async throws {
    let downloader = Downloader(configuration: .loopback)
    let scratch = try ScratchDirectory("bad-urls")
    defer { scratch.remove() }
    for (url, code) in BadURLs.cases {
      let start = ContinuousClock.now
      do {
        _ = try await downloader.download(
          DownloadRequest(url: url, directory: scratch.path), timeout: .seconds(1))
        Issue.record("\(url) should fail")
      } catch {
        #expect(error.code == code, "\(url): \(error)")
      }
      #expect(ContinuousClock.now - start <= .seconds(1) + deadlineMargin, "\(url)")
    }
    #expect(scratch.contents().isEmpty)  // refused before any file was made
  }

  @Test("a closed port fails with connect_failed")
  func connectionRefused() async throws {
    let port = try Loopback.freePort()
    let scratch = try ScratchDirectory("refused")
    defer { scratch.remove() }
    let start = ContinuousClock.now
    do {
      _ = try await Downloader(configuration: .loopback).download(
        DownloadRequest(url: "http://127.0.0.1:\(port)/a.jpg", directory: scratch.path),
        timeout: .seconds(3))
      Issue.record("expected connect_failed")
    } catch {
      #expect(error.code == .connectFailed)
    }
    #expect(ContinuousClock.now - start <= .seconds(3) + deadlineMargin)
    #expect(scratch.contents().isEmpty)
  }

  @Test("task cancellation stops the transfer promptly and leaves nothing behind")
  func cancellation() async throws {
    let server = try TestHTTPServer.start()
    defer { server.stop() }
    let scratch = try ScratchDirectory("cancel")
    defer { scratch.remove() }
    let downloader = Downloader(configuration: .loopback)
    // The task runs on a thread of its own too: on the cooperative pool its resumption after
    // the answer waited 2.3 s once, behind a full parallel run.
    let executor = ThreadExecutor()
    defer { executor.stop() }
    let task = Task(executorPreference: executor) { () async throws -> Download in
      try await downloader.download(
        DownloadRequest(url: server.url("/fault/trickle"), directory: scratch.path),
        timeout: .seconds(20))
    }
    // Cancel once body bytes are on disk (observed, not assumed): the transfer is mid-body.
    #expect(await scratch.waitForLeftover(withAtLeast: 1, upTo: eventWait), "no body byte arrived")
    let cancelledAt = ContinuousClock.now
    task.cancel()
    let result = await task.result
    let latency = ContinuousClock.now - cancelledAt
    switch result {
    case .success: Issue.record("expected cancelled")
    case .failure(let error): #expect((error as? AttachmentError)?.code == .cancelled)
    }
    // Prompt against a 20 s deadline and a body that would take 200 s.
    #expect(latency < deadlineMargin)
    #expect(scratch.leftovers().isEmpty)
  }

  @Test(
    "the caller is answered at the deadline while the engine thread is stuck in a callback, and the transfer is torn down after"
  )
  func deadlineKeptWhenEngineIsStuck() async throws {
    // Given an engine thread that blocks for 4 s inside a header callback. (This stands in for
    // libcurl stuck in a call, as its cleanup can be on a hung resolver; a real hung resolver
    // cannot be made on loopback without sending a query to the machine's resolver.)
    let server = try TestHTTPServer.start()
    defer { server.stop() }
    server.serve("/files/a", body: Array("hello".utf8))
    let scratch = try ScratchDirectory("stuck")
    defer { scratch.remove() }
    let request = DownloadRequest(
      url: server.url("/files/a"), directory: scratch.path, inspector: StallingInspector(seconds: 4))

    // When the caller's deadline is 500 ms
    let start = ContinuousClock.now
    var code: AttachmentError.Code?
    do {
      _ = try await Downloader(configuration: .loopback).download(
        request, deadline: start + .milliseconds(500))
    } catch {
      code = error.code
    }

    // Then it is answered at the deadline (not when the callback returns, 4 s in), and the
    // body's file is already gone
    #expect(code == .deadlineExceeded)
    #expect(ContinuousClock.now - start < .milliseconds(500) + deadlineMargin)
    #expect(scratch.leftovers().isEmpty)
    // And once the callback returns, the engine tears the transfer down: its connection closes.
    #expect(await server.waitForNoOpenConnections(upTo: .seconds(20)), "the transfer was never torn down")
  }

  @Test("curl codes map to the documented error codes")
  func codeMapping() {
    // dns_failed cannot be provoked on loopback without sending a query to a real resolver,
    // so the mapping itself is checked here.
    let dns = CurlCodeMapping.error(
      for: CURLE_COULDNT_RESOLVE_HOST, detail: "Could not resolve host: x.invalid", bodyBytes: 0,
      deadlinePassed: false)
    #expect(dns.code == .dnsFailed)
    let slow = CurlCodeMapping.error(
      for: CURLE_OPERATION_TIMEDOUT, detail: "Operation too slow. Less than 100 bytes/sec",
      bodyBytes: 10, deadlinePassed: false)
    #expect(slow.code == .tooSlow)
    let late = CurlCodeMapping.error(
      for: CURLE_OPERATION_TIMEDOUT, detail: "Operation timed out after 1000 milliseconds",
      bodyBytes: 10, deadlinePassed: true)
    #expect(late.code == .deadlineExceeded)
    let tls = CurlCodeMapping.error(
      for: CURLE_PEER_FAILED_VERIFICATION, detail: "", bodyBytes: 0, deadlinePassed: false)
    #expect(tls.code == .tlsFailed)
  }

  @Test("the redirect limit is a setting: 2 allows two redirects and refuses a third")
  func redirectLimitSetting() async throws {
    let server = try TestHTTPServer.start()
    defer { server.stop() }
    server.serve("/files/a", body: Array("hello".utf8))
    let scratch = try ScratchDirectory("redirects")
    defer { scratch.remove() }
    var configuration = DownloaderConfiguration.loopback
    configuration.maximumRedirects = 2
    let downloader = Downloader(configuration: configuration)
    // /redirect/N/… makes N + 1 redirects
    let two = try await downloader.download(
      DownloadRequest(url: server.url("/redirect/1/files/a"), directory: scratch.path),
      timeout: generousTimeout)
    two.file.map { _ = unlink($0) }
    #expect(two.redirectCount == 2)
    do {
      _ = try await downloader.download(
        DownloadRequest(url: server.url("/redirect/2/files/a"), directory: scratch.path),
        timeout: generousTimeout
      )
      Issue.record("three redirects should exceed a limit of 2")
    } catch {
      #expect(error.code == .tooManyRedirects, "\(error)")
    }
    #expect(scratch.leftovers().isEmpty)
  }

  @Test(
    "the default low-speed limit (1 KiB/s over 10 s) stops a trickle after its window, before the deadline")
  func defaultLowSpeedLimit() async throws {
    // Given the default configuration (private networks aside) and a body of 5 B/s
    let server = try TestHTTPServer.start()
    defer { server.stop() }
    let scratch = try ScratchDirectory("low-speed")
    defer { scratch.remove() }
    let configuration = DownloaderConfiguration.loopback
    #expect(configuration.lowSpeedLimit == DownloaderConfiguration().lowSpeedLimit)

    // When it is downloaded with a 20 s deadline
    let start = ContinuousClock.now
    var code: AttachmentError.Code?
    do {
      _ = try await Downloader(configuration: configuration).download(
        DownloadRequest(url: server.url("/fault/trickle"), directory: scratch.path),
        deadline: start + .seconds(20))
    } catch {
      code = error.code
    }

    // Then it is too slow: not before the 10 s window has run, well before the deadline
    let elapsed = ContinuousClock.now - start
    #expect(code == .tooSlow)
    #expect(elapsed >= .seconds(9), "stopped after \(elapsed): the window is shorter than 10 s")
    #expect(elapsed < .seconds(20))
    #expect(scratch.leftovers().isEmpty)
  }

  @Test("a redirect to a refused address is blocked at the socket; an allowed address is not")
  func redirectToBlockedAddress() async throws {
    // Given a first server whose address is allowed, redirecting to a second loopback address
    let first = try TestHTTPServer.start(host: "127.0.0.1")
    defer { first.stop() }
    let second = try TestHTTPServer.start(host: "127.0.0.2")
    defer { second.stop() }
    second.serve("/a.jpg", body: Array("second".utf8))
    first.route("/hop") { _, writer in
      _ = writer.respond(status: 302, headers: [("Location", second.url("/a.jpg"))])
    }
    let scratch = try ScratchDirectory("redirect-guard")
    defer { scratch.remove() }
    var configuration = DownloaderConfiguration()
    configuration.allowedAddresses = ["127.0.0.1"]

    // When the redirect is followed, Then the second address is refused before connecting
    do {
      _ = try await Downloader(configuration: configuration).download(
        DownloadRequest(url: first.url("/hop"), directory: scratch.path), timeout: generousTimeout)
      Issue.record("the redirect to 127.0.0.2 should be blocked")
    } catch {
      #expect(error.code == .blockedAddress, "\(error)")
      #expect(error.message.contains("127.0.0.0/8"), "\(error.message)")
    }
    #expect(first.requestCount(path: "/hop") == 1)
    #expect(second.totalConnections == 0)
    #expect(scratch.leftovers().isEmpty)

    // And with both addresses allowed, the same redirect is followed
    configuration.allowedAddresses = ["127.0.0.1", "127.0.0.2", "not an address"]
    let download = try await Downloader(configuration: configuration).download(
      DownloadRequest(url: first.url("/hop"), directory: scratch.path), timeout: generousTimeout)
    download.file.map { _ = unlink($0) }
    #expect(download.bytesReceived == 6)
  }
}

/// A one-way flag a server thread sets and a test awaits.
final class Flag: @unchecked Sendable {
  private let lock = NSLock()
  private var value = false

  func set() { lock.withLock { value = true } }

  /// Whether the flag is set now.
  var isSet: Bool { lock.withLock { value } }

  /// Whether the flag was set within `limit` (polled every 10 ms).
  func wait(upTo limit: Duration) async -> Bool {
    await poll(upTo: limit) { self.lock.withLock { self.value } }
  }
}

/// Polls `condition` every 10 ms until it holds or `limit` passes; returns whether it held.
func poll(upTo limit: Duration, _ condition: @Sendable () -> Bool) async -> Bool {
  let end = ContinuousClock.now + limit
  while ContinuousClock.now < end {
    if condition() { return true }
    try? await Task.sleep(for: .milliseconds(10))
  }
  return condition()
}

extension ScratchDirectory {
  /// Whether a temporary body file with at least `bytes` bytes appears within `limit`.
  func waitForLeftover(withAtLeast bytes: Int, upTo limit: Duration) async -> Bool {
    await poll(upTo: limit) {
      self.leftovers().contains { name in
        var info = stat()
        return stat(self.path + "/" + name, &info) == 0 && Int(info.st_size) >= bytes
      }
    }
  }
}

extension TestHTTPServer {
  /// Whether every connection to the server has closed within `limit`.
  func waitForNoOpenConnections(upTo limit: Duration) async -> Bool {
    await poll(upTo: limit) { self.openConnectionCount == 0 }
  }
}

extension Result where Failure == AttachmentError {
  fileprivate var failureCode: AttachmentError.Code? {
    if case .failure(let error) = self { return error.code }
    return nil
  }
}

/// An inspector that blocks the engine thread, standing in for libcurl stuck in a call.
struct StallingInspector: ResponseInspector {
  let seconds: Double

  func inspect(head: ResponseHead) -> InspectorVerdict {
    usleep(UInt32(seconds * 1_000_000))
    return .more
  }

  func inspect(body chunk: UnsafeRawBufferPointer, at offset: Int64) -> InspectorVerdict { .more }
}
