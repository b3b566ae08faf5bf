import Foundation
import TestSupport
import TestTraits
import Testing

@testable import AttachmentKit

/// HTTPS against `openssl s_server -WWW` with a certificate made at test time: a trusted CA
/// file works, an untrusted certificate fails with `tls_failed`.
@Suite("Downloader: TLS", .serialized, .threadOfItsOwn)
struct TLSTests {
  /// A running `openssl s_server` over a scratch directory, with its self-signed certificate.
  final class TLSServer: @unchecked Sendable {
    let scratch: ScratchDirectory
    let process = Process()
    let port: Int
    var certificate: String { scratch.path + "/cert.pem" }

    /// Starts a server whose self-signed certificate names `subjectAltName` (by default the
    /// address the tests connect to).
    init(subjectAltName: String = "IP:127.0.0.1", serverOptions: [String] = []) throws {
      scratch = try ScratchDirectory("tls")
      let commonName = subjectAltName.split(separator: ":").last.map(String.init) ?? "127.0.0.1"
      try Self.run(
        "/usr/bin/openssl",
        [
          "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=\(commonName)",
          "-addext", "subjectAltName=\(subjectAltName)", "-keyout", scratch.path + "/key.pem", "-out",
          scratch.path + "/cert.pem",
        ])
      try writeTestFile(Data("secure hello".utf8), to: scratch.path + "/hello.txt")
      port = try Loopback.freePort()
      process.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
      process.arguments =
        [
          "s_server", "-WWW", "-accept", "127.0.0.1:\(port)", "-cert", scratch.path + "/cert.pem",
          "-key", scratch.path + "/key.pem", "-quiet",
        ] + serverOptions
      process.currentDirectoryURL = URL(fileURLWithPath: scratch.path)
      process.standardOutput = FileHandle.nullDevice
      process.standardError = FileHandle.nullDevice
      try process.runClosingChildEnds()
      try waitUntilListening()
    }

    /// Kills the server without waiting (a `defer` cannot await); Foundation reaps it.
    func stop() {
      kill(process.processIdentifier, SIGKILL)
      scratch.remove()
    }

    /// Waits until the server listens, or has exited: observed progress, not a guess at how
    /// long OpenSSL takes to start on a busy machine (2 s was too short in a full parallel
    /// run). The 30 s bound only stops a broken test.
    private func waitUntilListening() throws {
      let bound = ContinuousClock.now + .seconds(30)
      while !Loopback.waitUntilListening(port: port, seconds: 0.1) {
        guard process.isRunning, ContinuousClock.now < bound else {
          throw SetUpError("openssl s_server never listened (running: \(process.isRunning))")
        }
      }
    }

    private static func run(_ tool: String, _ arguments: [String]) throws {
      let process = Process()
      process.executableURL = URL(fileURLWithPath: tool)
      process.arguments = arguments
      process.standardOutput = FileHandle.nullDevice
      process.standardError = FileHandle.nullDevice
      try process.runClosingChildEnds()
      process.blockUntilExit()
      process.closeStandardPipes()
      guard process.terminationStatus == 0 else {
        throw SetUpError("\(tool) exited \(process.terminationStatus)")
      }
    }
  }

  @Test("a certificate from the configured CA file is trusted")
  func trustedCA() async throws {
    let server = try await onOwnThread { try TLSServer() }
    defer { server.stop() }
    var configuration = DownloaderConfiguration.loopback
    configuration.certificateAuthorityFile = server.certificate
    let scratch = try ScratchDirectory("tls-ok")
    defer { scratch.remove() }

    let download = try await Downloader(configuration: configuration).download(
      DownloadRequest(url: "https://127.0.0.1:\(server.port)/hello.txt", directory: scratch.path),
      timeout: generousTimeout)

    let file = try #require(download.file)
    defer { unlink(file) }
    #expect(try String(contentsOfFile: file, encoding: .utf8) == "secure hello")
    #expect(download.timings.tlsMicroseconds > 0)
  }

  @Test("an untrusted certificate fails with tls_failed and leaves nothing")
  func untrusted() async throws {
    let server = try await onOwnThread { try TLSServer() }
    defer { server.stop() }
    let scratch = try ScratchDirectory("tls-bad")
    defer { scratch.remove() }
    let start = ContinuousClock.now
    do {
      _ = try await Downloader(configuration: .loopback).download(
        DownloadRequest(url: "https://127.0.0.1:\(server.port)/hello.txt", directory: scratch.path),
        timeout: generousTimeout)
      Issue.record("expected tls_failed")
    } catch {
      #expect(error.code == .tlsFailed, "\(error)")
    }
    #expect(ContinuousClock.now - start <= generousTimeout + deadlineMargin)
    #expect(scratch.contents().isEmpty)
  }

  @Test("a trusted certificate for another host name fails with tls_failed: the host is verified")
  func hostnameMismatch() async throws {
    // Given a certificate the client trusts (it is in the CA file) but issued for another name
    let server = try await onOwnThread { try TLSServer(subjectAltName: "DNS:media.example.com") }
    defer { server.stop() }
    var configuration = DownloaderConfiguration.loopback
    configuration.certificateAuthorityFile = server.certificate
    let scratch = try ScratchDirectory("tls-name")
    defer { scratch.remove() }

    // When it is fetched by address, Then verification of the host name refuses it
    do {
      _ = try await Downloader(configuration: configuration).download(
        DownloadRequest(url: "https://127.0.0.1:\(server.port)/hello.txt", directory: scratch.path),
        timeout: generousTimeout)
      Issue.record("expected tls_failed for a certificate naming another host")
    } catch {
      #expect(error.code == .tlsFailed, "\(error)")
    }
    #expect(scratch.contents().isEmpty)
  }
}

/// Why a TLS test server could not be set up.
private struct SetUpError: Error, CustomStringConvertible {
  let description: String
  init(_ description: String) { self.description = description }
}
