import Foundation
import TestSupport
import TestTraits
import Testing

/// Issue 40: `attachkit sign` with several URLs, from standard input and from
/// `ATTACHKIT_KEY_FILE`, and every URL checked before anything is printed.
@Suite("attachkit sign", .threadOfItsOwn)
struct SignCLITests {
  /// A scratch directory holding a key file (`keys`).
  private struct Keys {
    let scratch: Scratch
    var file: String { scratch.path + "/keys" }

    init() throws {
      scratch = try Scratch()
      try writeTestFile(
        "# the first signs\n" + String(repeating: "a1", count: 32) + "\n", to: scratch.path + "/keys")
    }
  }

  static let urls = [
    "https://cdn.example.com/push/1.jpg", "https://cdn.example.com/push/2.png?v=3",
    "http://media.example.com/clip.mp4",
  ]

  @Test(
    "several URLs: one path a line, in order, each the path the URL alone gets; the same from standard input")
  func severalURLs() async throws {
    let keys = try Keys()
    defer { keys.scratch.remove() }
    var alone: [String] = []
    for url in Self.urls {
      let one = try await CLI.run(["sign", "--key-file", keys.file, url])
      #expect(one.status == 0, "\(one.stderr)")
      alone.append(one.stdout)
    }
    #expect(alone.allSatisfy { $0.hasPrefix("/v1/a/") && $0.hasSuffix("\n") })
    #expect(Set(alone).count == Self.urls.count)

    let all = try await CLI.run(["sign", "--key-file", keys.file] + Self.urls)
    #expect(all.status == 0, "\(all.stderr)")
    #expect(all.stdout == alone.joined())
    let piped = try await CLI.run(
      ["sign", "--key-file", keys.file, "-"],
      stdin: "# a campaign\n\n" + Self.urls.joined(separator: "\n") + "\n")
    #expect(piped.status == 0, "\(piped.stderr)")
    #expect(piped.stdout == alone.joined())
    let based = try await CLI.run(
      ["sign", "--key-file", keys.file, "--base", "https://m.example.com/"] + Self.urls)
    #expect(based.stdout == alone.map { "https://m.example.com" + $0 }.joined())
  }

  @Test("ATTACHKIT_KEY_FILE stands for --key-file; --key-file wins over it")
  func keyFileFromEnvironment() async throws {
    let keys = try Keys()
    defer { keys.scratch.remove() }
    let given = try await CLI.run(["sign", "--key-file", keys.file, Self.urls[0]])
    let fromEnvironment = try await CLI.run(
      ["sign", Self.urls[0]], environment: ["ATTACHKIT_KEY_FILE": keys.file])
    #expect(fromEnvironment.status == 0, "\(fromEnvironment.stderr)")
    #expect(fromEnvironment.stdout == given.stdout)
    let overridden = try await CLI.run(
      ["sign", "--key-file", keys.file, Self.urls[0]],
      environment: ["ATTACHKIT_KEY_FILE": keys.scratch.path + "/missing"])
    #expect(overridden.stdout == given.stdout)
    let none = try await CLI.run(["sign", Self.urls[0]], environment: ["ATTACHKIT_KEY_FILE": ""])
    #expect(none.status == 2)
    #expect(none.stderr.contains("--key-file"), "\(none.stderr)")
    let unreadable = try await CLI.run(
      ["sign", Self.urls[0]], environment: ["ATTACHKIT_KEY_FILE": keys.scratch.path + "/missing"])
    #expect(unreadable.status == 2)
  }

  @Test(
    "a URL that is not an absolute http(s) URL, or '-' read as one, is exit 2 with nothing printed",
    arguments: [
      ["not a url"], ["/push/1.jpg"], ["ftp://cdn.example.com/a.jpg"], ["https://"],
      [SignCLITests.urls[0], "nope"], [SignCLITests.urls[0], "-"], ["-", SignCLITests.urls[0]],
    ])
  func refusedURLs(words: [String]) async throws {
    let keys = try Keys()
    defer { keys.scratch.remove() }
    let result = try await CLI.run(["sign", "--key-file", keys.file] + words)
    #expect(result.status == 2, "\(words): \(result.stdout)")
    #expect(result.stdout.isEmpty)
    #expect(result.stderr.contains("sign"), "\(result.stderr)")
  }

  @Test("from standard input: a bad line or a line '-' is exit 2 with nothing printed; no URL at all too")
  func refusedLines() async throws {
    let keys = try Keys()
    defer { keys.scratch.remove() }
    for stdin in [Self.urls[0] + "\nnope\n", Self.urls[0] + "\n-\n", "", "# nothing\n"] {
      let result = try await CLI.run(["sign", "--key-file", keys.file, "-"], stdin: stdin)
      #expect(result.status == 2, "\(stdin): \(result.stdout)")
      #expect(result.stdout.isEmpty)
    }
    let named = try await CLI.run(["sign", "--key-file", keys.file, "-"], stdin: Self.urls[0] + "\nnope\n")
    #expect(named.stderr.contains("Line 2: The URL is not absolute"), "\(named.stderr)")
    #expect(named.stderr.contains("invalid_url"), "\(named.stderr)")
  }
}
