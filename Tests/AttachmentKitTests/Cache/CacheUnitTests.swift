import Foundation
import TestTraits
import Testing

@testable import AttachmentKit

@Suite("Cache building blocks", .cpuBound)
struct CacheUnitTests {
  @Test("URL keys: scheme and host lower-cased, default port and fragment dropped, path kept")
  func urlKeys() {
    let cases: [(String, String)] = [
      ("HTTP://Example.COM/A.jpg", "http://example.com/A.jpg"),
      ("http://example.com:80/a.jpg#x", "http://example.com/a.jpg"),
      ("https://example.com:443/a?q=1#f", "https://example.com/a?q=1"),
      ("https://example.com:8443/a", "https://example.com:8443/a"),
      ("http://example.com", "http://example.com/"),
      ("http://example.com?x=1", "http://example.com/?x=1"),
      ("http://[::1]:80/a", "http://[::1]/a"),
    ]
    for (input, expected) in cases {
      #expect(URLKey(input)?.normalized == expected, "\(input)")
    }
    #expect(URLKey("ftp://example.com/a") == nil)
    #expect(URLKey("example.com/a") == nil)
    // Keys are their bytes: the NFC and NFD spellings of café are two URLs (issue #25, item 4)
    #expect(URLKey("http://a/caf\u{E9}.jpg") != URLKey("http://a/cafe\u{301}.jpg"))
    #expect(Set([URLKey("http://a/caf\u{E9}.jpg"), URLKey("http://a/cafe\u{301}.jpg")]).count == 2)
  }

  @Test("HTTP dates parse in all three formats and format back")
  func httpDates() {
    let expected = 784_111_777.0  // Sun, 06 Nov 1994 08:49:37 GMT
    #expect(HTTPDate.parse("Sun, 06 Nov 1994 08:49:37 GMT") == expected)
    #expect(HTTPDate.parse("Sunday, 06-Nov-94 08:49:37 GMT") == expected)
    #expect(HTTPDate.parse("Sun Nov  6 08:49:37 1994") == expected)
    #expect(HTTPDate.format(expected) == "Sun, 06 Nov 1994 08:49:37 GMT")
    #expect(HTTPDate.parse("0") == nil)
    #expect(HTTPDate.parse("Sun, 32 Nov 1994 08:49:37 GMT") == nil)
    #expect(HTTPDate.parse("") == nil)
  }

  @Test("freshness follows RFC 9111: max-age, then Expires − Date, then 10 % of Date − Last-Modified")
  func freshness() {
    let now = 1_800_000_000.0
    let date = HTTPDate.format(now)
    func lifetime(_ cc: String?, expires: String? = nil, lastModified: String? = nil) -> Double {
      Freshness.policy(
        cacheControl: cc, expires: expires, date: date, lastModified: lastModified, now: now,
        defaultLifetime: 99
      ).lifetime
    }
    #expect(lifetime("public, max-age=600") == 600)
    #expect(lifetime("max-age=600", expires: HTTPDate.format(now + 60)) == 600)
    #expect(lifetime(nil, expires: HTTPDate.format(now + 60)) == 60)
    #expect(lifetime(nil, expires: "0") == 0)
    #expect(lifetime(nil, lastModified: HTTPDate.format(now - 1000)) == 100)
    #expect(lifetime(nil) == 99)
    #expect(lifetime("no-cache") == 0)
    let noStore = Freshness.policy(
      cacheControl: "private, no-store", expires: nil, date: date, lastModified: nil, now: now,
      defaultLifetime: 99)
    #expect(noStore.noStore)
  }

  @Test("records round-trip, and damaged ones do not parse")
  func records() throws {
    let validation = Validation(
      type: .gif, detectedMIME: "image/gif", bytes: 904, sha256: String(repeating: "a", count: 64), width: 64,
      height: 48, frames: 5, durationSeconds: nil, warnings: ["one", "two"])
    let record = CacheRecord(
      url: "http://x/a.gif", validation: validation, peer: .loopback, etag: "\"e\"", lastModified: nil,
      date: "d",
      fetchedAt: 1.5,
      freshUntil: 2.5, lastAccess: 3.5)
    let text = record.encoded()
    #expect(CacheRecord(decoding: text[...]) == record)
    #expect(CacheRecord(decoding: text.prefix(text.count / 2)) == nil)
    #expect(CacheRecord(decoding: "garbage"[...]) == nil)
    #expect(CacheRecord(decoding: text.replacingOccurrences(of: "type gif", with: "type webp")[...]) == nil)
    // A sha256 becomes a file name: exactly 64 lower-case hex digits, nothing else
    let sha = String(repeating: "a", count: 64)
    for bad in [
      String(repeating: "A", count: 64), String(repeating: "a", count: 63) + "g",
      String(repeating: "a", count: 63),
      "../../" + String(repeating: "a", count: 58), String(repeating: "a", count: 63) + "/",
    ] {
      #expect(
        CacheRecord(decoding: text.replacingOccurrences(of: "sha256 \(sha)", with: "sha256 \(bad)")[...])
          == nil, "\(bad)")
    }
    // The peer class round-trips, and an unknown one does not parse
    #expect(CacheRecord(decoding: text[...])?.peer == .loopback)
    #expect(
      CacheRecord(decoding: text.replacingOccurrences(of: "peer loopback", with: "peer moon")[...]) == nil)
  }

  @Test("a video's poster time round-trips; a record without one reads as none; a malformed one is a miss")
  func posterTimeLine() throws {
    var validation = Validation(
      type: .mp4, detectedMIME: nil, bytes: 5_000, sha256: String(repeating: "d", count: 64), width: 320,
      height: 240, frames: nil, durationSeconds: 4, codecs: ["avc1.42C00D"], warnings: [])
    validation.posterTimeSeconds = 1.04
    let record = CacheRecord(
      url: "http://x/a.mp4", validation: validation, peer: .loopback, etag: nil, lastModified: nil, date: nil,
      fetchedAt: 1, freshUntil: 2, lastAccess: 3)
    let text = record.encoded()
    #expect(text.contains("\nposter-time 1.04\n"))
    #expect(text.hasPrefix("v 2\n"))  // binaries from before poster times read it, without the line
    #expect(CacheRecord(decoding: text[...]) == record)
    #expect(CacheRecord(decoding: text[...])?.validation.posterTimeSeconds == 1.04)
    let older = text.replacingOccurrences(of: "poster-time 1.04\n", with: "")
    #expect(CacheRecord(decoding: older[...])?.validation.posterTimeSeconds == nil)
    for bad in ["-1", "nan", "inf", "soon"] {
      let damaged = text.replacingOccurrences(of: "poster-time 1.04", with: "poster-time \(bad)")
      #expect(CacheRecord(decoding: damaged[...]) == nil, "\(bad)")
    }
  }

  @Test("a rescued derivative's record is version 2r, which binaries from before rescue cannot read")
  func rescuedRecordVersion() throws {
    var validation = Validation(
      type: .jpeg, detectedMIME: "image/jpeg", bytes: 2_000, sha256: String(repeating: "b", count: 64),
      width: 64,
      height: 48, frames: nil, durationSeconds: nil, warnings: [])
    validation.rescued = Rescue(
      from: "image/webp", actions: [.converted], originalBytes: 900, originalWidth: 64, originalHeight: 48)
    let record = CacheRecord(
      url: "http://x/a.webp", validation: validation, peer: .loopback, etag: nil, lastModified: nil,
      date: nil,
      fetchedAt: 1, freshUntil: 2, lastAccess: 3)
    let text = record.encoded()
    #expect(text.hasPrefix("v 2r\n"))
    #expect(CacheRecord(decoding: text[...]) == record)
    // A pre-rescue reader accepts only "v 2": the derivative is never taken for an original.
    #expect(!text.contains("v 2\n"))
    // Neither a rescued line under "v 2" nor "v 2r" without one parses.
    #expect(CacheRecord(decoding: text.replacingOccurrences(of: "v 2r\n", with: "v 2\n")[...]) == nil)
    let plain =
      text.split(separator: "\n").filter { !$0.hasPrefix("rescued") }.joined(separator: "\n") + "\n"
    #expect(CacheRecord(decoding: plain[...]) == nil)
    #expect(CacheRecord(decoding: plain.replacingOccurrences(of: "v 2r\n", with: "v 2\n")[...]) != nil)
  }

  @Test("a rescue's provenance is keyed lines: any rescuer's facts round-trip, a torn one is a miss")
  func rescuedProvenanceLines() throws {
    var validation = Validation(
      type: .mp4, detectedMIME: "video/mp4", bytes: 5_000, sha256: String(repeating: "c", count: 64),
      width: 1280, height: 720, frames: nil, durationSeconds: 29.9, warnings: [])
    validation.rescued = Rescue(
      rescuer: "media", from: "video/webm", actions: [.converted, Rescue.Action(rawValue: "trimmed")],
      originalBytes: 80_000_000, originalWidth: 1920, originalHeight: 1080, originalDurationSeconds: 45.5,
      originalCodecs: ["vp09.00.41.08", "opus"])
    let record = CacheRecord(
      url: "http://x/a.webm", validation: validation, peer: .public, etag: nil, lastModified: nil, date: nil,
      fetchedAt: 1, freshUntil: 2, lastAccess: 3)
    let text = record.encoded()
    for line in [
      "rescued-by media", "rescued-from video/webm", "rescued-actions converted,trimmed",
      "rescued-bytes 80000000", "rescued-width 1920", "rescued-height 1080", "rescued-duration 45.5",
      "rescued-codec vp09.00.41.08", "rescued-codec opus",
    ] {
      #expect(text.contains("\n\(line)\n"), "\(line)")
    }
    #expect(CacheRecord(decoding: text[...]) == record)
    // Facts a rescuer does not know are simply absent, and still round-trip.
    validation.rescued = Rescue(rescuer: "media", from: "audio/flac", actions: [.converted], originalBytes: 9)
    let sparse = CacheRecord(
      url: "http://x/a.flac", validation: validation, peer: .public, etag: nil, lastModified: nil, date: nil,
      fetchedAt: 1, freshUntil: 2, lastAccess: 3)
    #expect(!sparse.encoded().contains("rescued-width"))
    #expect(CacheRecord(decoding: sparse.encoded()[...]) == sparse)
    // A malformed fact makes the record unreadable (a miss), never a half-read provenance.
    for (line, torn) in [
      ("rescued-duration 45.5", "rescued-duration -1"), ("rescued-bytes 80000000", "rescued-bytes x"),
      ("rescued-actions converted,trimmed", "rescued-actions "), ("rescued-width 1920", "rescued-width wide"),
    ] {
      #expect(CacheRecord(decoding: text.replacingOccurrences(of: line, with: torn)[...]) == nil, "\(torn)")
    }
  }

  @Test("a record written with the positional rescued line still reads, as the image rescuer's")
  func positionalRescuedLine() throws {
    let text = """
      v 2r
      url http://x/a.webp
      sha256 \(String(repeating: "d", count: 64))
      bytes 2000
      type jpeg
      width 64
      height 48
      rescued image/webp converted,downscaled 900 64 48
      fetched 1.0
      fresh 2.0
      access 3.0

      """
    let record = try #require(CacheRecord(decoding: text[...]))
    #expect(
      record.validation.rescued
        == Rescue(
          rescuer: "image", from: "image/webp", actions: [.converted, .downscaled], originalBytes: 900,
          originalWidth: 64, originalHeight: 48))
    // Written again, it takes the keyed form.
    #expect(record.encoded().contains("\nrescued-by image\n"))
    #expect(!record.encoded().contains("\nrescued image/webp"))
  }
}
