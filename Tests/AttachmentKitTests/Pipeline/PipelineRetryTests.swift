import Foundation
import PosixLock
import TestSupport
import TestTraits
import Testing

@testable import AttachmentKit

/// A retried miss is validated as one whole body: the sniffer, the digest and the check see
/// the resumed bytes continue the first ones, or a restarted body from its first byte.
@Suite("Pipeline: retried and resumed misses", .threadOfItsOwn)
struct PipelineRetryTests {
  /// One case: a body, where its first response is cut, how, and whether the origin ignores
  /// the range.
  struct Case: CustomTestStringConvertible, Sendable {
    let name: String
    let cutPercent: Int
    var cutsWithClose = true
    var ignoresRange = false
    var testDescription: String {
      "\(name) cut at \(cutPercent) % by \(cutsWithClose ? "FIN" : "RST")\(ignoresRange ? ", range ignored" : "")"
    }
  }

  static let cases: [Case] = [
    // 1.6 MB: hashed during the transfer, past the sniff window when cut
    Case(name: "large.wav", cutPercent: 90),
    Case(name: "large.wav", cutPercent: 60, cutsWithClose: false, ignoresRange: true),
    // 50 KB: cut inside the sniff window, which the resumed bytes must continue
    Case(name: "mp4-h264-dts.mp4", cutPercent: 40),
    Case(name: "mp4-h264-dts.mp4", cutPercent: 40, ignoresRange: true),
  ]

  @Test("a cut miss is retried and accepted under its own SHA-256", arguments: cases)
  func cutMissAccepted(_ test: Case) async throws {
    // Given an origin whose first response is cut, and a pipeline with the default retry
    let fixture = try PipelineFixture("pipeline-retry")
    defer { fixture.close() }
    let scratch = try ScratchDirectory("pipeline-retry-oracle")
    defer { scratch.remove() }
    let body =
      test.name == "large.wav" ? ProbeFixtures.wav(samples: 800_000) : try Samples.bytes(test.name)
    let cut = body.count * test.cutPercent / 100
    var behaviour = ResumableBehaviour()
    behaviour.resetFirstResponseAfter = cut
    behaviour.cutsWithClose = test.cutsWithClose
    behaviour.ignoresRange = test.ignoresRange
    fixture.server.serveResumable("/m", body: body, behaviour: behaviour)

    // When it is fetched
    let attachment = try await fixture.pipeline.attachment(
      for: fixture.server.url("/m"), timeout: generousTimeout)

    // Then it is accepted whole, in two attempts, resumed exactly at the cut unless ignored
    let oracle = try await sha256sum(body, in: scratch.path)
    #expect(attachment.sha256 == oracle)
    #expect(attachment.bytes == Int64(body.count))
    #expect(attachment.transferTimings?.attempts == 2)
    let resumed = attachment.transferTimings?.resumedBytes
    if test.ignoresRange {
      #expect(resumed == 0)
    } else {
      #expect(resumed == Int64(cut))
    }
    #expect(fixture.server.requestCount(path: "/m") == 2)
    let left = await fixture.leftBehind()
    #expect(left.isEmpty, "left behind: \(left)")
  }

  @Test("a changed entity on the retry (200, new ETag) is sniffed and checked from its own first byte")
  func changedEntityStartsOver() async throws {
    // Given an origin whose first response, an MP4 with ETag v1, is cut after its first half
    // (past the sniffer's first judgement, which named it MP4), and that answers the retry
    // with a PNG and ETag v2 (If-Range no longer matches)
    let fixture = try PipelineFixture("pipeline-retry-changed")
    defer { fixture.close() }
    let scratch = try ScratchDirectory("pipeline-retry-changed-oracle")
    defer { scratch.remove() }
    let first = try Samples.bytes("mp4-h264-dts.mp4")
    let second = try Samples.bytes("png-rgba.png")
    let served = Locked(0)
    fixture.server.route("/m") { request, writer in
      let index = served.withLock { count in
        defer { count += 1 }
        return count
      }
      if index == 0 {
        _ = writer.writeHead(
          status: 200,
          headers: [
            ("Content-Type", "video/mp4"), ("ETag", "\"v1\""), ("Accept-Ranges", "bytes"),
            ("Content-Length", String(first.count)),
          ])
        _ = writer.write(Array(first[..<(first.count / 2)]))
        writer.closeConnection()
      } else {
        _ = writer.respond(
          status: 200,
          headers: [("Content-Type", "image/png"), ("ETag", "\"v2\""), ("Accept-Ranges", "bytes")],
          body: second)
      }
    }

    // When it is fetched
    let attachment = try await fixture.pipeline.attachment(
      for: fixture.server.url("/m"), timeout: generousTimeout)

    // Then the ranged retry asked for the rest of v1, and the answer is the PNG alone
    #expect(fixture.server.requests(path: "/m").last?.header("If-Range") == "\"v1\"")
    #expect(attachment.type == .png)
    #expect(attachment.sha256 == (try await sha256sum(second, in: scratch.path)))
    #expect(attachment.bytes == Int64(second.count))
    #expect(attachment.transferTimings?.resumedBytes == 0)
  }
}
