import Foundation
import TestSupport
import Testing

@testable import AttachmentKit

/// The cache never serves a wrong byte: damage is found, dropped and refetched.
@Suite("Cache integrity and maintenance")
struct CacheIntegrityTests {
  typealias Fixture = PipelineTests.Fixture

  @Test("a byte flipped in a stored object is found by verify and the next call refetches")
  func flippedByte() async throws {
    let fixture = try Fixture()
    defer { fixture.close() }
    let jpeg = try Samples.bytes("jpeg-progressive.jpg")
    fixture.server.serve("/f.jpg", body: jpeg, contentType: "image/jpeg")
    let url = fixture.server.url("/f.jpg")
    let first = try await fixture.pipeline.attachment(for: url, timeout: .seconds(5))

    // Flip one byte in place (same size, so only a hash check can tell)
    let handle = try FileHandle(forUpdating: URL(fileURLWithPath: first.path))
    try handle.seek(toOffset: 200)
    let byte = try #require(try handle.read(upToCount: 1)?.first)
    try handle.seek(toOffset: 200)
    try handle.write(contentsOf: Data([byte ^ 0xFF]))
    try handle.close()

    let report = try fixture.pipeline.cache.verify()
    #expect(report.corrupt == 1)
    #expect(report.entries == 0)

    let again = try await fixture.pipeline.attachment(for: url, timeout: .seconds(5))
    #expect(again.source == .network)
    #expect(try Data(contentsOf: URL(fileURLWithPath: again.path)) == Data(jpeg))
    #expect(fixture.server.requestCount(path: "/f.jpg") == 2)
  }

  @Test("a truncated object is a miss: dropped and refetched, never served")
  func truncatedObject() async throws {
    let fixture = try Fixture()
    defer { fixture.close() }
    let mp3 = try Samples.bytes("mp3-no-tag.mp3")
    fixture.server.serve("/t.mp3", body: mp3, contentType: "audio/mpeg")
    let url = fixture.server.url("/t.mp3")
    let first = try await fixture.pipeline.attachment(for: url, timeout: .seconds(5))
    #expect(truncate(first.path, 100) == 0)

    let again = try await fixture.pipeline.attachment(for: url, timeout: .seconds(5))

    #expect(again.source == .network)
    #expect(try Data(contentsOf: URL(fileURLWithPath: again.path)) == Data(mp3))
  }

  @Test("a record whose content is gone is a miss")
  func missingContent() async throws {
    let fixture = try Fixture()
    defer { fixture.close() }
    fixture.server.serve("/m.wav", body: try Samples.bytes("wav-pcm16.wav"), contentType: "audio/wav")
    let url = fixture.server.url("/m.wav")
    let first = try await fixture.pipeline.attachment(for: url, timeout: .seconds(5))
    #expect(unlink(first.path) == 0)
    let again = try await fixture.pipeline.attachment(for: url, timeout: .seconds(5))
    #expect(again.source == .network)
    #expect(FileManager.default.fileExists(atPath: again.path))
  }

  @Test("garbage collection evicts least recently used entries down to the low watermark")
  func lruEviction() async throws {
    // Given 6 distinct 16 KiB-ish WAV files fetched in order
    let fixture = try Fixture { $0.cache.gracePeriodSeconds = 0 }
    defer { fixture.close() }
    let wav = try Samples.bytes("wav-pcm16.wav")
    var urls: [String] = []
    for index in 0..<6 {
      var body = wav
      body[body.count - 1] = UInt8(index)  // distinct content, same structure
      fixture.server.serve("/w\(index).wav", body: body, contentType: "audio/wav")
      urls.append(fixture.server.url("/w\(index).wav"))
    }
    for url in urls {
      _ = try await fixture.pipeline.attachment(for: url, timeout: .seconds(5))
    }
    // Make the first entry the most recently used
    try setLastAccess(fixture: fixture, url: urls[0], to: FileSystem.now() + 100)

    // When the cache is limited to about three files' worth
    let limit = Int64(wav.count) * 3 + 100
    let report = try fixture.pipeline.cache.collectGarbage(maximumBytes: limit)

    // Then it holds at most 80 % of that, and the recently used entry survived
    #expect(report.bytes <= Int64(Double(limit) * 0.8))
    #expect(report.evicted >= 3)
    #expect(fixture.pipeline.cache.entry(for: try #require(URLKey(urls[0]))) != nil)
    #expect(fixture.pipeline.cache.entry(for: try #require(URLKey(urls[1]))) == nil)
  }

  @Test("garbage collection while another task writes loses nothing that was committed")
  func sweepDuringWrites() async throws {
    let fixture = try Fixture()  // default 300 s grace period protects young content
    defer { fixture.close() }
    let wav = try Samples.bytes("wav-pcm16.wav")
    for index in 0..<20 {
      var body = wav
      body[body.count - 1] = UInt8(index)  // distinct content, same structure
      fixture.server.serve("/p\(index).wav", body: body, contentType: "audio/wav")
    }
    let pipeline = fixture.pipeline
    let server = fixture.server
    async let written: [AttachmentKit.Attachment] = withThrowingTaskGroup(of: AttachmentKit.Attachment.self) {
      group in
      for index in 0..<20 {
        group.addTask {
          try await pipeline.attachment(for: server.url("/p\(index).wav"), timeout: .seconds(10))
        }
      }
      return try await group.reduce(into: []) { $0.append($1) }
    }
    for _ in 0..<10 {
      _ = try pipeline.cache.collectGarbage(maximumBytes: 1 << 30)
    }
    let attachments = try await written
    _ = try pipeline.cache.collectGarbage(maximumBytes: 1 << 30)
    for attachment in attachments {
      #expect(FileManager.default.fileExists(atPath: attachment.path))
    }
    let verify = try pipeline.cache.verify()
    #expect(verify.entries == 20)
    #expect(verify.corrupt == 0)
  }

  @Test("a world-writable cache directory is refused with io_error")
  func unsafeDirectory() throws {
    let scratch = try ScratchDirectory("perm")
    defer { scratch.remove() }
    chmod(scratch.path, 0o777)
    do {
      _ = try AttachmentCache(configuration: CacheConfiguration(directory: scratch.path))
      Issue.record("expected io_error")
    } catch {
      #expect(error.code == .ioError)
      #expect(error.message.contains("writable by everyone"))
    }
  }

  @Test("the cache creates its directories 0700 and its files 0600")
  func permissions() async throws {
    let fixture = try Fixture()
    defer { fixture.close() }
    fixture.server.serve("/p.png", body: try Samples.bytes("png-gray.png"), contentType: "image/png")
    let attachment = try await fixture.pipeline.attachment(
      for: fixture.server.url("/p.png"), timeout: .seconds(5))
    let root = fixture.scratch.path + "/cache"
    for directory in [
      root, root + "/v2", root + "/v2/content", root + "/v2/content/ab", root + "/v2/index",
      root + "/v2/index/00", root + "/v2/tmp",
    ] {
      let mode = try FileManager.default.attributesOfItem(atPath: directory)[.posixPermissions] as? Int
      #expect(mode == 0o700, "\(directory)")
    }
    let mode = try FileManager.default.attributesOfItem(atPath: attachment.path)[.posixPermissions] as? Int
    #expect(mode == 0o600)
  }

  private func setLastAccess(fixture: Fixture, url: String, to time: Double) throws {
    let key = try #require(URLKey(url))
    let entry = try #require(fixture.pipeline.cache.entry(for: key))
    fixture.pipeline.cache.touch(entry, now: time)
  }
}
