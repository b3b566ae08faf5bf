import Foundation
import TestSupport
import TestTraits
import Testing

@testable import AttachmentKit

/// Cache-key rules (issue #37, item 1): query parameters left out of the key, never out of the
/// request, so presigned URLs of one object share one entry.
@Suite("Cache-key rules", .threadOfItsOwn)
struct CacheKeyRulesTests {
  /// An S3 SigV4 presigned URL of `path` on `base`, signed at `date` with `signature`.
  static func presigned(_ base: String, date: String, signature: String, extra: String = "") -> String {
    base
      + "?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AKIA%2F20261205%2Fus-east-1%2Fs3%2Faws4_request"
      + "&X-Amz-Date=\(date)&X-Amz-Expires=3600&X-Amz-SignedHeaders=host\(extra)&X-Amz-Signature=\(signature)"
  }

  @Test(
    "a preset leaves its parameters out of the key, keeps the others in order, and drops an emptied query")
  func keys() throws {
    let s3 = try CacheKeyRules(["preset:s3"])
    let first = try AttachmentURL(
      Self.presigned("https://b.s3.amazonaws.com/a.jpg", date: "1", signature: "aa"))
    let second = try AttachmentURL(
      Self.presigned("https://B.s3.amazonaws.com:443/a.jpg", date: "2", signature: "bb"))
    #expect(first.keyed(by: s3).normalized == "https://b.s3.amazonaws.com/a.jpg")
    #expect(first.keyed(by: s3).key == second.keyed(by: s3).key)
    #expect(first.keyed(by: s3).key.droppedParameters)
    // The request is unchanged
    #expect(first.keyed(by: s3).text == first.text)
    // Without rules the two are two keys
    #expect(first.key != second.key)
    // A parameter that selects content stays, in its place
    let version = try AttachmentURL(
      Self.presigned("https://b.s3.amazonaws.com/a.jpg", date: "1", signature: "aa", extra: "&versionId=v2"))
    #expect(version.keyed(by: s3).normalized == "https://b.s3.amazonaws.com/a.jpg?versionId=v2")
    let plain = try AttachmentURL("https://b.example.com/a.jpg?w=10&utm_source=x&h=20&utm_medium=y")
    let utm = try CacheKeyRules(["utm_*"])
    #expect(plain.keyed(by: utm).normalized == "https://b.example.com/a.jpg?w=10&h=20")
    #expect(!(try AttachmentURL("https://b.example.com/a.jpg?w=10")).keyed(by: utm).key.droppedParameters)
    // Names are compared as written: case matters
    #expect(
      try AttachmentURL("https://b.example.com/a?UTM_source=1").keyed(by: utm).normalized.contains("UTM"))
  }

  @Test(
    "an exact name is no prefix: preset:azure drops sig and sv, and keeps size and sprite, whose names start as si and sp do"
  )
  func exactNamesAreWhole() throws {
    let azure = try CacheKeyRules(["preset:azure"])
    let large = try AttachmentURL(
      "https://a.blob.core.windows.net/c/x.jpg?size=large&sprite=2&sig=abc&sv=2020")
    #expect(
      large.keyed(by: azure).normalized == "https://a.blob.core.windows.net/c/x.jpg?size=large&sprite=2")
    // Two images that differ only in a kept parameter are two entries
    let small = try AttachmentURL(
      "https://a.blob.core.windows.net/c/x.jpg?size=small&sprite=2&sig=def&sv=2021")
    #expect(large.keyed(by: azure).key != small.keyed(by: azure).key)
    #expect(!azure.ignores("size") && !azure.ignores("sprite") && !azure.ignores("s"))
    #expect(azure.ignores("si") && azure.ignores("sp") && azure.ignores("sig"))
  }

  @Test(
    "rules that are no name, prefix or preset are refused, naming the rule",
    arguments: ["", "*", "a*b", "preset:s4", "a=b", "a&b"])
  func badRules(_ rule: String) {
    #expect(throws: AttachmentError.self) { try CacheKeyRules([rule]) }
    #expect(((try? CacheKeyRules([rule])) == nil))
  }

  @Test(
    "two presigned URLs of one object: one origin request, the second a hit; the record keeps the last URL fetched"
  )
  func presignedURLsShareAnEntry() async throws {
    let fixture = try PipelineFixture("cache-key") {
      $0.cache.keyRules = (try? CacheKeyRules(["preset:s3"])) ?? .none
    }
    defer { fixture.close() }
    fixture.server.serve(
      "/obj.jpg", body: try Samples.bytes("jpeg-baseline.jpg"), contentType: "image/jpeg",
      headers: [("Cache-Control", "max-age=0")], etag: "\"e1\"")
    let base = fixture.server.url("/obj.jpg")
    // (dated ahead: a presigned URL past its own expiry is refused without a request)
    let one = Self.presigned(base, date: "20991205T060000Z", signature: "11")
    let two = Self.presigned(base, date: "20991205T060500Z", signature: "22")

    // The first is fetched with its whole query
    let first = try await fixture.pipeline.attachment(for: one, deadline: .now + generousTimeout)
    #expect(first.source == .network)
    #expect(fixture.server.requests(path: "/obj.jpg").map(\.query) == [String(one.split(separator: "?")[1])])
    // The second, stale, is revalidated with its own URL and the first one's ETag: a 304
    let second = try await fixture.pipeline.attachment(for: two, deadline: .now + generousTimeout)
    #expect(second.source == .revalidated)
    #expect(second.path == first.path)
    let requests = fixture.server.requests(path: "/obj.jpg")
    #expect(requests.count == 2)
    #expect(requests.last?.query == String(two.split(separator: "?")[1]))
    #expect(requests.last?.header("If-None-Match") == "\"e1\"")
    // The record is filed under the key and keeps the URL of the last fetch
    let key = fixture.pipeline.keyed(try AttachmentURL(two)).key
    #expect(fixture.pipeline.tier.entry(for: key)?.record.source == two)
    #expect(fixture.pipeline.tier.entry(for: key)?.record.url == base)
  }

  @Test(
    "objects declared public: a fresh entry answers another presigned URL with no request, and still under the caller's policy"
  )
  func hitObeysPolicy() async throws {
    let fixture = try PipelineFixture("cache-key-policy") {
      $0.cache.keyRules = (try? CacheKeyRules(["X-Amz-*", CacheKeyRules.publicObjectsRule])) ?? .none
    }
    defer { fixture.close() }
    fixture.server.serve(
      "/p.jpg", body: try Samples.bytes("jpeg-baseline.jpg"), contentType: "image/jpeg",
      headers: [("Cache-Control", "max-age=600")])
    let base = fixture.server.url("/p.jpg")
    _ = try await fixture.pipeline.attachment(
      for: Self.presigned(base, date: "1", signature: "11"), deadline: .now + generousTimeout)
    let other = try AttachmentURL(Self.presigned(base, date: "2", signature: "22"))
    guard case .hit = fixture.pipeline.lookup(other) else {
      Issue.record("another presigned URL of the object is not a hit")
      return
    }
    #expect(fixture.server.requestCount(path: "/p.jpg") == 1)
    // A caller whose limit the file breaks is refused from the same entry
    var strict = fixture.pipeline.configuration
    strict.limits.maximumImageBytes = 100
    guard case .refused(let error) = try AttachmentPipeline(configuration: strict).lookup(other) else {
      Issue.record("the strict caller was not refused")
      return
    }
    #expect(error.code == .tooLarge)
    // Without the rules, the other URL is a miss of its own
    var plain = fixture.pipeline.configuration
    plain.cache.keyRules = .none
    guard case .miss = try AttachmentPipeline(configuration: plain).lookup(other) else {
      Issue.record("without rules, another URL was not a miss")
      return
    }
  }
}
