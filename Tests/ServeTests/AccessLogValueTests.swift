import AttachmentKit
import Foundation
import Glibc
import TestTraits
import Testing

@testable import AttachmentServer

/// The access log's rules as values: trusted networks, the forwarded client, request ids,
/// the logged path and the time stamp, no I/O.
@Suite("serve: the access log's rules as values", .threadOfItsOwn)
struct AccessLogValueTests {
  @Test("trusted networks: addresses and CIDR blocks, IPv4 and IPv6, IPv4-mapped addresses as IPv4")
  func networks() throws {
    let trusted = try TrustedNetworks(parsing: "10.0.0.0/8, 192.0.2.7,fd00::/8, 198.51.100.128/25")
    func has(_ text: String) -> Bool { IPAddress(text).map { trusted.contains($0) } ?? false }
    #expect(has("10.255.1.2") && has("192.0.2.7") && has("fd12::1") && has("198.51.100.200"))
    #expect(!has("11.0.0.1") && !has("192.0.2.8") && !has("fe80::1") && !has("198.51.100.127"))
    #expect(has("::ffff:10.1.2.3"))  // what a dual-stack socket reports for an IPv4 peer
    #expect(try TrustedNetworks(parsing: "0.0.0.0/0").contains(#require(IPAddress("203.0.113.9"))))
    for bad in [
      "10.0.0.0/33", "fd00::/129", "example.com", "10.0.0.1:80", "10.0.0.0/", "[::1]", "10.0.0.0/8,",
    ] {
      let parsed = try? TrustedNetworks(parsing: bad)
      #expect(bad == "10.0.0.0/8," ? parsed != nil : parsed == nil, "\(bad)")
    }
    #expect(TrustedNetworks().isEmpty)
  }

  @Test("X-Forwarded-For is read from the right past trusted hops; an item that is no address ends the walk")
  func forwardedClient() throws {
    let trusted = try TrustedNetworks(parsing: "10.0.0.0/8")
    let peer = try #require(IPAddress("10.0.0.1"))
    func client(_ header: String) -> String? {
      RequestFacts.forwardedClient(header, peer: peer, trusted: trusted)?.text
    }
    #expect(client("203.0.113.9") == "203.0.113.9")
    #expect(client("198.51.100.1, 203.0.113.9, 10.2.3.4") == "203.0.113.9")
    #expect(client("10.9.9.9, 10.2.3.4") == "10.9.9.9")  // all trusted: the farthest
    #expect(client("203.0.113.9, junk, 10.2.3.4") == "10.2.3.4")
    #expect(client("junk") == nil)
    #expect(client(" 2001:db8::1 ,\t10.2.3.4") == "2001:db8::1")
    #expect(client(String(repeating: "1.2.3.4, ", count: 1000)) == nil)  // over 4 KiB: not read
  }

  @Test("request ids: new ones are 32 hex digits; a sane incoming one is 1-128 bytes of a small alphabet")
  func requestIds() {
    let id = RequestID.make()
    #expect(id.count == 32 && id.allSatisfy(\.isHexDigit) && id != RequestID.make())
    #expect(RequestID.isSane("4f0c7a9e-1b2c-4d3e-8f90-a1b2c3d4e5f6"))
    #expect(RequestID.isSane("Root=1-67891233-abcdef012345678912345678"))
    for bad in ["", "a b", "a\"b", "a\u{1b}b", "é", String(repeating: "a", count: 129)] {
      #expect(!RequestID.isSane(bad), "\(bad)")
    }
  }

  @Test("the logged path: no signature, the URL re-encoded redacted; other paths without their query")
  func paths() {
    let url = "https://user:pw@cdn.example.com/a.jpg?X-Amz-Signature=abc&w=1&token=t#f"
    let route = Route.attachment(url: url, signature: "ab12")
    let logged = LoggedPath.of(target: "/v1/a/ab12/x", route: route)
    #expect(logged.hasPrefix("/v1/a/-/"))
    let decoded = Base64URL.decode(logged.dropFirst(8)).map { String(decoding: $0, as: UTF8.self) }
    #expect(decoded == "https://***@cdn.example.com/a.jpg?X-Amz-Signature=***&w=1&token=***#f")
    let clean = "https://cdn.example.com/a.jpg"
    let encoded = Base64URL.encode(Array(clean.utf8))
    #expect(
      LoggedPath.of(target: "/v1/a/ab12/\(encoded)", route: .attachment(url: clean, signature: "ab12"))
        == "/v1/a/-/\(encoded)")
    #expect(LoggedPath.of(target: "/healthz?key=secret", route: .health) == "/healthz")
    #expect(LoggedPath.of(target: "/v1/a/zz/%41", route: .malformed("x")) == "/v1/a/-")
  }

  @Test("the time is RFC 3339 in UTC with milliseconds")
  func time() {
    #expect(
      AccessLog.rfc3339(timespec(tv_sec: 1_796_189_315, tv_nsec: 7_000_000)) == "2026-12-02T05:28:35.007Z")
    #expect(AccessLog.rfc3339(timespec(tv_sec: 0, tv_nsec: 999_999_999)) == "1970-01-01T00:00:00.999Z")
  }

  @Test(
    "the line written straight is the JSON object of its fields, byte for byte, escapes and absent fields included"
  )
  func lineIsTheObject() throws {
    var facts = RequestFacts()
    facts.requestId = "0123abcd"
    facts.client = "203.0.113.9"
    facts.peer = "10.0.0.1"
    var line = AccessLog.Line(
      facts: facts, method: "GET", route: "attachment", path: "/v1/a/-/aHR0cA", url: nil, status: 200,
      outcome: "cache", bytes: 126_059, seconds: 0.000_412_5, completed: true)
    // The reference: the fields as one JSON object (what the line was before it was written straight)
    func reference(_ line: AccessLog.Line, time: String) -> String {
      var fields: [(key: String, value: JSON)] = [
        ("time", .string(time)), ("requestId", .string(line.facts.requestId)),
        ("client", .string(line.facts.client)), ("peer", .string(line.facts.peer)),
      ]
      if let forwarded = line.facts.forwardedFor { fields.append(("forwardedFor", .string(forwarded))) }
      fields += [
        ("method", .string(line.method)), ("route", .string(line.route)), ("path", .string(line.path)),
      ]
      if let url = line.url { fields.append(("url", .string(LoggedPath.redact(url)))) }
      fields += [
        ("status", .int(Int64(line.status))), ("outcome", .string(line.outcome)), ("bytes", .int(line.bytes)),
        ("ms", .double((line.seconds * 1_000_000).rounded() / 1000)), ("completed", .bool(line.completed)),
      ]
      if let agent = line.facts.userAgent { fields.append(("userAgent", .string(agent))) }
      if let range = line.facts.range { fields.append(("range", .string(range))) }
      return JSON.object(fields).text + "\n"
    }
    let time = "2026-12-04T17:00:00.123Z"
    #expect(AccessLog.text(line, time: time) == reference(line, time: time))
    // Every optional field, quotes, backslashes, controls, bidi marks and non-ASCII text
    line.facts.forwardedFor = "198.51.100.1, 10.2.3.4"
    line.facts.userAgent = "ua \"quoted\" \\ \u{1B}[31m \u{202E}rtl é 日本"
    line.facts.range = "bytes=0-99"
    line.url = "https://user:secret@example.com/p.jpg?token=abc&x=1"
    line.status = 0
    line.completed = false
    line.seconds = 12.3456789
    #expect(AccessLog.text(line, time: time) == reference(line, time: time))
    let parsed =
      try JSONSerialization.jsonObject(with: Data(AccessLog.text(line, time: time).utf8)) as? [String: Any]
    #expect(parsed?["userAgent"] as? String == line.facts.userAgent)
    #expect((parsed?["url"] as? String)?.contains("secret") == false)
  }
}
