import Foundation
import TestSupport
import TestTraits
import Testing

@testable import AttachmentKit

/// Proxies only when asked, and what the address guard still refuses through one. The test
/// server doubles as a forward proxy: it answers absolute-form request targets by their path.
@Suite("Proxies", .threadOfItsOwn)
struct ProxyTests {
  private func downloader(proxy: String, unchecked: Bool, allowPrivate: Bool = false) -> Downloader {
    var configuration = DownloaderConfiguration()
    configuration.proxy = DownloaderConfiguration.Proxy(url: proxy, acceptsUncheckedDestinations: unchecked)
    configuration.allowPrivateNetworks = allowPrivate
    return Downloader(configuration: configuration)
  }

  @Test("an explicit proxy carries the request: the proxy sees the absolute URL, no DNS for the host")
  func explicitProxy() async throws {
    let proxy = try TestHTTPServer.start()
    defer { proxy.stop() }
    proxy.serve("/a.jpg", body: Array("through the proxy".utf8))
    let scratch = try ScratchDirectory("proxy")
    defer { scratch.remove() }
    // `.invalid` never resolves (RFC 6761): only a proxy can answer for it.
    let download = try await downloader(proxy: proxy.baseURL, unchecked: true).download(
      DownloadRequest(url: "http://media.example.invalid/a.jpg", directory: scratch.path),
      timeout: generousTimeout)
    defer { download.file.map { try? FileManager.default.removeItem(atPath: $0) } }
    #expect(download.bytesReceived == 17)
    #expect(proxy.requests(path: "/a.jpg").map(\.target) == ["http://media.example.invalid/a.jpg"])
  }

  @Test(
    "a proxy with the guard on and no acceptance is refused with invalid_configuration, before any connection"
  )
  func proxyNeedsAcceptance() async throws {
    let proxy = try TestHTTPServer.start()
    defer { proxy.stop() }
    let scratch = try ScratchDirectory("proxy")
    defer { scratch.remove() }
    do {
      _ = try await downloader(proxy: proxy.baseURL, unchecked: false).download(
        DownloadRequest(url: "http://media.example.invalid/a.jpg", directory: scratch.path),
        timeout: generousTimeout)
      Issue.record("a proxy without acceptance should be refused")
    } catch {
      #expect(error.code == .invalidConfiguration, "\(error)")
    }
    #expect(proxy.totalConnections == 0)
    #expect(scratch.contents().isEmpty)
  }

  @Test(
    "through a proxy, private IP literals in any spelling and localhost names are blocked before the proxy is asked",
    arguments: [
      "http://10.0.0.1/a.jpg", "http://2130706433/a.jpg", "http://0x7f.1/a.jpg", "http://127.1/a.jpg",
      "http://[::1]/a.jpg", "http://[::ffff:169.254.169.254]/a.jpg", "http://[64:ff9b::a00:1]/a.jpg",
      "http://localhost/a.jpg", "http://api.LOCALHOST./a.jpg", "http://169.254.169.254/latest/meta-data",
      // percent-encoded, as libcurl decodes them (the review's three passed the check)
      "http://%31%32%37.0.0.1/a.jpg", "http://%6c%6f%63%61%6c%68%6f%73%74/a.jpg", "http://127.0.0.1%2e/a.jpg",
      "http://1%30.0.0.1/a.jpg", "http://[::%31]/a.jpg",
    ])
  func literalHostsBlocked(url: String) async throws {
    let proxy = try TestHTTPServer.start()
    defer { proxy.stop() }
    let scratch = try ScratchDirectory("proxy")
    defer { scratch.remove() }
    do {
      _ = try await downloader(proxy: proxy.baseURL, unchecked: true).download(
        DownloadRequest(url: url, directory: scratch.path), timeout: generousTimeout)
      Issue.record("\(url) should be blocked")
    } catch {
      #expect(error.code == .blockedAddress, "\(url): \(error)")
    }
    #expect(proxy.totalConnections == 0)
    #expect(scratch.contents().isEmpty)
  }

  @Test("through a proxy, a redirect to a private literal (percent-encoded too) is blocked and not followed")
  func redirectBlocked() async throws {
    let proxy = try TestHTTPServer.start()
    defer { proxy.stop() }
    proxy.route("/hop") { _, writer in
      _ = writer.respond(status: 302, headers: [("Location", "http://169.254.169.254/latest/meta-data")])
    }
    proxy.route("/relative") { _, writer in
      _ = writer.respond(status: 302, headers: [("Location", "//[fd00::1]/x")])
    }
    proxy.route("/encoded") { _, writer in
      _ = writer.respond(
        status: 302, headers: [("Location", "http://%31%36%39.254.169.254/latest/meta-data")])
    }
    let scratch = try ScratchDirectory("proxy")
    defer { scratch.remove() }
    for path in ["/hop", "/relative", "/encoded"] {
      do {
        _ = try await downloader(proxy: proxy.baseURL, unchecked: true).download(
          DownloadRequest(url: "http://media.example.invalid\(path)", directory: scratch.path),
          timeout: generousTimeout)
        Issue.record("\(path) should be blocked")
      } catch {
        #expect(error.code == .blockedAddress, "\(path): \(error)")
      }
    }
    // Each URL was asked for once; no redirect target reached the proxy.
    #expect(proxy.allRequests.map(\.path).sorted() == ["/encoded", "/hop", "/relative"])
    #expect(scratch.leftovers().isEmpty)
  }

  @Test("allowPrivateNetworks with a proxy needs no acceptance and checks nothing")
  func allowPrivateThroughProxy() async throws {
    let proxy = try TestHTTPServer.start()
    defer { proxy.stop() }
    proxy.serve("/a.jpg", body: Array("ok".utf8))
    let scratch = try ScratchDirectory("proxy")
    defer { scratch.remove() }
    let download = try await downloader(proxy: proxy.baseURL, unchecked: false, allowPrivate: true).download(
      DownloadRequest(url: "http://10.0.0.1/a.jpg", directory: scratch.path), timeout: generousTimeout)
    defer { download.file.map { try? FileManager.default.removeItem(atPath: $0) } }
    #expect(download.bytesReceived == 2)
    #expect(proxy.requests(path: "/a.jpg").map(\.target) == ["http://10.0.0.1/a.jpg"])
  }
}
