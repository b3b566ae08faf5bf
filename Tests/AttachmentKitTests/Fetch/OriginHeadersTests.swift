import Foundation
import TestSupport
import TestTraits
import Testing

@testable import AttachmentKit

/// Per-origin request headers (issue #37, item 2): sent only to URLs under their prefix, not
/// after a redirect to another origin, and never in a result or an error.
@Suite("Origin headers", .threadOfItsOwn)
struct OriginHeadersTests {
  static let secret = "Bearer s3cr3t-t0ken"

  @Test("lines are URL-PREFIX Name: value; a bad line is refused by its number, never showing its value")
  func parsing() throws {
    let headers = try OriginHeaders(
      fileText: """
        # private media
        https://media.example.com/private/ Authorization: \(Self.secret)

        https://api.example.net X-Api-Key:k-1
        """)
    #expect(
      headers.lines(for: "https://media.example.com/private/a.jpg") == ["Authorization: \(Self.secret)"])
    #expect(headers.lines(for: "https://media.example.com/public/a.jpg").isEmpty)
    #expect(headers.lines(for: "https://media.example.com/private/../public/a.jpg").isEmpty)
    #expect(headers.lines(for: "http://media.example.com/private/a.jpg").isEmpty)
    #expect(headers.lines(for: "https://api.example.net:443/x?y") == ["X-Api-Key: k-1"])
    #expect(!String(describing: headers).contains("s3cr3t"))
    for bad in [
      "media.example.com Authorization: x", "https://m.example.com/ Authorization", "https://m.example.com/",
      "https://m.example.com/ Host: evil", "https://m.example.com/ Range: bytes=0-",
      "https://m.example.com/ A b: c",
      "https://m.example.com/ X: a\u{1}b", "https://m.example.com/?q X: y",
    ] {
      do {
        _ = try OriginHeaders(fileText: "# first\n" + bad + " secret-value\n")
        Issue.record("accepted: \(bad)")
      } catch {
        #expect(error.code == .invalidConfiguration)
        #expect(error.message.contains("Line 2"), "\(error.message)")
        #expect(!error.message.contains("secret-value"))
      }
    }
  }

  @Test(
    "a file its group or others may read or write is refused, naming chmod 600",
    arguments: [0o644, 0o640, 0o620, 0o604, 0o602, 0o660])
  func fileMode(mode: Int) throws {
    let scratch = try ScratchDirectory("origin-headers-mode")
    defer { scratch.remove() }
    let path = scratch.path + "/headers"
    try writeTestFile("https://m.example.com/ Authorization: x\n", to: path)
    #expect(chmod(path, mode_t(mode)) == 0)
    #expect(throws: AttachmentError.self) { try OriginHeaders(file: path) }
    do { _ = try OriginHeaders(file: path) } catch { #expect(error.message.contains("chmod 600")) }
    #expect(chmod(path, 0o600) == 0)
    #expect(try OriginHeaders(file: path).rules.count == 1)
  }

  @Test(
    "sent to its origin; not after a redirect to another; kept on a redirect within the prefix; in no result")
  func sentOnlyToItsOrigin() async throws {
    let origin = try TestHTTPServer.start()
    defer { origin.stop() }
    let other = try TestHTTPServer.start()
    defer { other.stop() }
    let jpeg = try Samples.bytes("jpeg-baseline.jpg")
    // The private origin answers only with the credential
    origin.route("/private/a.jpg") { request, writer in
      if request.header("Authorization") == Self.secret {
        _ = writer.respond(status: 200, headers: [("Content-Type", "image/jpeg")], body: jpeg)
      } else {
        _ = writer.respond(status: 401, body: Array("no".utf8))
      }
    }
    origin.route("/private/moved") { _, writer in
      _ = writer.respond(status: 302, headers: [("Location", "a.jpg")])
    }
    origin.route("/private/away") { _, writer in
      _ = writer.respond(status: 302, headers: [("Location", other.url("/b.jpg"))])
    }
    other.serve("/b.jpg", body: jpeg, contentType: "image/jpeg")
    let scratch = try ScratchDirectory("origin-headers")
    defer { scratch.remove() }
    var configuration = PipelineConfiguration(cacheDirectory: scratch.path + "/cache")
    configuration.downloader.allowPrivateNetworks = true
    // libcurl itself drops a custom Authorization on a redirect to another host and port, not
    // other headers: X-Api-Key is what would leak without the transfer's own hop.
    configuration.downloader.originHeaders = try OriginHeaders(
      fileText:
        "\(origin.url("/private/")) Authorization: \(Self.secret)\n\(origin.url("/private/")) X-Api-Key: k-77\n"
    )
    let pipeline = try AttachmentPipeline(configuration: configuration)

    let direct = try await pipeline.attachment(for: origin.url("/private/a.jpg"), timeout: .seconds(20))
    #expect(direct.validation.type == .jpeg)
    let moved = try await pipeline.attachment(for: origin.url("/private/moved"), timeout: .seconds(20))
    #expect(moved.validation.type == .jpeg)
    #expect(origin.requests(path: "/private/moved").last?.header("Authorization") == Self.secret)
    #expect(origin.requests(path: "/private/a.jpg").allSatisfy { $0.header("Authorization") == Self.secret })
    // The redirect to another origin is followed without the credential
    let away = try await pipeline.attachment(for: origin.url("/private/away"), timeout: .seconds(20))
    #expect(away.validation.type == .jpeg)
    #expect(other.requests(path: "/b.jpg").count == 1)
    #expect(
      other.allRequests.allSatisfy { $0.header("Authorization") == nil && $0.header("X-Api-Key") == nil })
    #expect(origin.requests(path: "/private/away").last?.header("X-Api-Key") == "k-77")
    // The downloader reports the hop as the redirect it is
    var downloading = DownloaderConfiguration.loopback
    downloading.originHeaders = configuration.downloader.originHeaders
    let download = try await Downloader(configuration: downloading).download(
      DownloadRequest(url: origin.url("/private/away"), directory: scratch.path), timeout: .seconds(20))
    defer { download.file.map { _ = unlink($0) } }
    #expect(download.redirectCount == 1 && download.finalURL == other.url("/b.jpg"))
    #expect(download.url == origin.url("/private/away"))
    #expect(other.allRequests.allSatisfy { $0.header("Authorization") == nil })
    // Nothing reports it
    for attachment in [direct, moved, away] {
      #expect(!String(describing: attachment).contains("s3cr3t"))
    }
    // Without the rule, the origin refuses, and the error does not show a credential either
    var plain = configuration
    plain.downloader.originHeaders = .none
    plain.cache.directory = scratch.path + "/plain"
    do {
      _ = try await AttachmentPipeline(configuration: plain).attachment(
        for: origin.url("/private/a.jpg"), timeout: .seconds(20))
      Issue.record("fetched without the credential")
    } catch {
      #expect(error.httpStatus == 401)
    }
  }
}
