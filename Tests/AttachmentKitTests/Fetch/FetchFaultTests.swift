import CCurl
import Foundation
import TestSupport
import Testing

@testable import AttachmentKit

/// Every network fault gets its own error code, within the deadline plus 250 ms, and leaves no
/// temporary file behind.
@Suite("Downloader: faults")
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
    let milliseconds =
      Double(elapsed.components.seconds) * 1000 + Double(elapsed.components.attoseconds) / 1e15
    let got = outcome.failureCode?.rawValue ?? "success"
    print("fault \(fault.path): \(got) after \(Int(milliseconds.rounded())) ms (deadline \(fault.timeout))")
    #expect(elapsed <= fault.timeout + .milliseconds(250))
    #expect(scratch.leftovers().isEmpty)
  }

  @Test("a 404's status is reported, and its body is not downloaded")
  func httpStatusCarriesCode() async throws {
    let server = try TestHTTPServer.start()
    defer { server.stop() }
    let scratch = try ScratchDirectory("404")
    defer { scratch.remove() }
    do {
      _ = try await Downloader(configuration: .loopback).download(
        DownloadRequest(url: server.url("/status/404"), directory: scratch.path), timeout: .seconds(3))
      Issue.record("expected http_status")
    } catch {
      #expect(error.code == .httpStatus)
      #expect(error.httpStatus == 404)
      #expect(error.detected == "text/html")
    }
    #expect(scratch.contents().isEmpty)
  }

  @Test("a declared length over the limit is refused before the body")
  func declaredLengthRefusedEarly() async throws {
    let server = try TestHTTPServer.start()
    defer { server.stop() }
    let scratch = try ScratchDirectory("huge")
    defer { scratch.remove() }
    let (outcome, seconds) = await measure { () async -> AttachmentError? in
      do {
        _ = try await Downloader(configuration: .loopback).download(
          DownloadRequest(url: server.url("/fault/huge-length"), directory: scratch.path),
          timeout: .seconds(5))
        return nil
      } catch let error as AttachmentError { return error } catch { return nil }
    }
    #expect(outcome?.code == .tooLarge)
    #expect(seconds < 1.0)  // the route sends its body slowly: refusing took no body
  }

  @Test("URLs that are not http(s) or not URLs fail before any connection")
  func badURLs() async throws {
    let downloader = Downloader(configuration: .loopback)
    let cases: [(String, AttachmentError.Code)] = [
      ("ftp://127.0.0.1/file.jpg", .unsupportedScheme),
      ("file:///etc/passwd", .unsupportedScheme),
      ("not a url", .invalidURL),
      ("http://", .invalidURL),
      ("http:///path", .invalidURL),
      ("http://exa mple.com/a.jpg", .invalidURL),
    ]
    for (url, code) in cases {
      do {
        _ = try await downloader.download(DownloadRequest(url: url), timeout: .seconds(1))
        Issue.record("\(url) should fail")
      } catch {
        #expect(error.code == code, "\(url): \(error)")
      }
    }
  }

  @Test("a closed port fails with connect_failed")
  func connectionRefused() async throws {
    let port = try unusedLoopbackPort()
    let scratch = try ScratchDirectory("refused")
    defer { scratch.remove() }
    do {
      _ = try await Downloader(configuration: .loopback).download(
        DownloadRequest(url: "http://127.0.0.1:\(port)/a.jpg", directory: scratch.path),
        timeout: .seconds(3))
      Issue.record("expected connect_failed")
    } catch {
      #expect(error.code == .connectFailed)
    }
    #expect(scratch.contents().isEmpty)
  }

  @Test("task cancellation stops the transfer promptly and leaves nothing behind")
  func cancellation() async throws {
    let server = try TestHTTPServer.start()
    defer { server.stop() }
    let scratch = try ScratchDirectory("cancel")
    defer { scratch.remove() }
    let downloader = Downloader(configuration: .loopback)
    let task = Task { () async throws -> Download in
      try await downloader.download(
        DownloadRequest(url: server.url("/fault/trickle"), directory: scratch.path),
        timeout: .seconds(20))
    }
    try await Task.sleep(for: .milliseconds(600))  // bytes are arriving by now
    let cancelledAt = ContinuousClock.now
    task.cancel()
    let result = await task.result
    let latency = ContinuousClock.now - cancelledAt
    switch result {
    case .success: Issue.record("expected cancelled")
    case .failure(let error): #expect((error as? AttachmentError)?.code == .cancelled)
    }
    #expect(latency < .milliseconds(100))
    #expect(scratch.leftovers().isEmpty)
  }

  @Test("the caller is answered at the deadline even while the engine thread is stuck")
  func deadlineKeptWhenEngineIsStuck() async throws {
    // Given an engine thread that blocks for 2 s inside a callback (as libcurl's cleanup can
    // block on a hung resolver)
    let server = try TestHTTPServer.start()
    defer { server.stop() }
    server.serve("/files/a", body: Array("hello".utf8))
    let scratch = try ScratchDirectory("stuck")
    defer { scratch.remove() }
    let request = DownloadRequest(
      url: server.url("/files/a"), directory: scratch.path, inspector: StallingInspector(seconds: 2))

    // When the caller's deadline is 500 ms
    let start = ContinuousClock.now
    var code: AttachmentError.Code?
    do {
      _ = try await Downloader(configuration: .loopback).download(
        request, deadline: start + .milliseconds(500))
    } catch {
      code = error.code
    }

    // Then it is answered at the deadline, and the body's file is already gone
    #expect(code == .deadlineExceeded)
    #expect(ContinuousClock.now - start < .milliseconds(750))
    #expect(scratch.leftovers().isEmpty)
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
