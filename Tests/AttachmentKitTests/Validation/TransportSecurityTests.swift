import Foundation
import TestSupport
import TestTraits
import Testing

@testable import AttachmentKit

/// Issue 27, item 12: an accepted file fetched over plain HTTP carries the `ats` warning, on the
/// network answer and on its cache hits; one fetched over HTTPS does not. iOS App Transport
/// Security blocks HTTP in an app extension unless the app declares an exception, so a device
/// downloading the URL itself would fail where this service succeeded.
@Suite("App Transport Security warning", .threadOfItsOwn)
struct TransportSecurityTests {
  /// The `ats` warnings of `attachment`.
  static func atsWarnings(_ attachment: AttachmentKit.Attachment) -> [String] {
    attachment.warnings.filter { $0.hasPrefix(TransportSecurity.code + ":") }
  }

  @Test("an http:// URL's result carries the ats warning, from the network and the cache; https:// not")
  func plainHTTP() async throws {
    let fixture = try PipelineFixture("ats-http")
    defer { fixture.close() }
    fixture.server.serve("/a.png", body: try Samples.bytes("png-rgba.png"), contentType: "image/png")
    let url = fixture.server.url("/a.png")
    #expect(url.hasPrefix("http://"))

    let first = try await fixture.pipeline.attachment(for: url, timeout: generousTimeout)
    let second = try await fixture.pipeline.attachment(for: url, timeout: generousTimeout)

    #expect(first.source == .network && second.source == .cache)
    #expect(Self.atsWarnings(first).count == 1, "\(first.warnings)")
    #expect(Self.atsWarnings(second).count == 1, "\(second.warnings)")
    #expect(Self.atsWarnings(first).first?.contains("App Transport Security") == true)
    #expect(try await Self.overHTTPS().isEmpty)
  }

  /// The same PNG over HTTPS (openssl s_server with a CA the pipeline trusts, started with
  /// `serverOptions`): its `ats` warnings.
  static func overHTTPS(serverOptions: [String] = []) async throws -> [String] {
    let server = try await onOwnThread { try TLSTests.TLSServer(serverOptions: serverOptions) }
    defer { server.stop() }
    try Data(try Samples.bytes("png-rgba.png")).write(
      to: URL(fileURLWithPath: server.scratch.path + "/a.png"))
    let scratch = try ScratchDirectory("ats-https")
    defer { scratch.remove() }
    var configuration = PipelineConfiguration(cacheDirectory: scratch.path + "/cache")
    configuration.downloader.allowPrivateNetworks = true
    configuration.downloader.certificateAuthorityFile = server.certificate
    let pipeline = try AttachmentPipeline(configuration: configuration)

    let attachment = try await pipeline.attachment(
      for: "https://127.0.0.1:\(server.port)/a.png", timeout: generousTimeout)

    #expect(attachment.type == .png)
    return Self.atsWarnings(attachment)
  }

  @Test("over TLS 1.2 with an RSA key exchange (no forward secrecy) the result carries the ats warning")
  func withoutForwardSecrecy() async throws {
    // openssl s_server offering only TLS_RSA_WITH_AES_128_GCM_SHA256: libcurl accepts it, ATS
    // does not (it requires ECDHE)
    let warnings = try await Self.overHTTPS(serverOptions: ["-tls1_2", "-cipher", "AES128-GCM-SHA256"])
    #expect(warnings.count == 1, "\(warnings)")
    #expect(warnings.first?.contains("without forward secrecy") == true, "\(warnings)")
    #expect(warnings.first?.contains("TLSv1.2") == true, "\(warnings)")
    // and over TLS 1.2 with ECDHE, none
    #expect(
      try await Self.overHTTPS(serverOptions: ["-tls1_2", "-cipher", "ECDHE-RSA-AES128-GCM-SHA256"]).isEmpty)
  }

  @Test("a pipeline configured without it adds no ats warning")
  func turnedOff() async throws {
    let fixture = try PipelineFixture("ats-off") { $0.warnsAboutTransportSecurity = false }
    defer { fixture.close() }
    fixture.server.serve("/a.png", body: try Samples.bytes("png-rgba.png"), contentType: "image/png")
    let attachment = try await fixture.pipeline.attachment(
      for: fixture.server.url("/a.png"), timeout: generousTimeout)
    #expect(Self.atsWarnings(attachment).isEmpty)
  }

  @Test("the warning follows the URL asked for and the last redirect, in any letter case")
  func schemes() {
    #expect(TransportSecurity.warning(requested: "https://a.example/x", final: "https://b.example/y") == nil)
    #expect(TransportSecurity.warning(requested: "https://a.example/x", final: "http://b.example/y") != nil)
    #expect(TransportSecurity.warning(requested: "HTTP://a.example/x", final: nil) != nil)
    let warning = TransportSecurity.warning(requested: "http://user:secret@a.example/x", final: nil)
    let text: String = warning ?? ""
    #expect(!text.isEmpty && text.range(of: "secret") == nil)
    // TLS: below 1.2, or without forward secrecy; 1.3 and 1.2 with ECDHE pass
    let https = "https://a.example/x"
    let old = TLSFacts(version: "TLSv1.1", versionNumber: 0x0302, forwardSecrecy: true)
    #expect(
      TransportSecurity.warning(requested: https, final: nil, tls: old)?.contains("TLS 1.2 or later") == true)
    let rsa = TLSFacts(version: "TLSv1.2", versionNumber: 0x0303, forwardSecrecy: false)
    #expect(
      TransportSecurity.warning(requested: https, final: nil, tls: rsa)?.contains("forward secrecy") == true)
    for good in [
      TLSFacts(version: "TLSv1.2", versionNumber: 0x0303, forwardSecrecy: true),
      TLSFacts(version: "TLSv1.3", versionNumber: 0x0304, forwardSecrecy: true),
    ] {
      #expect(TransportSecurity.warning(requested: https, final: nil, tls: good) == nil)
    }
  }
}
