import Testing

@testable import AttachmentKit

/// The URL key hash: FNV-1a with 128 bits, checked against the reference's published values.
@Suite("FNV-1a 128", .cpuBound)
struct FNV1aTests {
  @Test(
    "the reference vectors",
    arguments: [
      ("", "6c62272e07bb014262b821756295c58d"), ("a", "d228cb696f1a8caf78912b704e4a8964"),
      ("foobar", "343e1662793c64bf6f0d3597ba446f18"),
    ])
  func vectors(input: String, expected: String) {
    #expect(FNV1a128.hex(input.utf8) == expected)
  }

  @Test("URL keys are 32 hex digits, equal for spellings of one URL and different otherwise")
  func keys() throws {
    let one = try #require(URLKey("HTTP://Example.COM:80/a.jpg#frag"))
    let same = try #require(URLKey("http://example.com/a.jpg"))
    let other = try #require(URLKey("http://example.com/A.jpg"))
    #expect(one.digest == same.digest)
    #expect(one.digest != other.digest)
    #expect(one.digest.count == 32 && one.digest.allSatisfy { $0.isHexDigit && !$0.isUppercase })
    #expect(URLKey("https://user@[::1]:443?q=1")?.normalized == "https://user@[::1]/?q=1")
  }
}
