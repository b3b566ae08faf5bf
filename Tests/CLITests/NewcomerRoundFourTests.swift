import Foundation
import Glibc
import TestSupport
import TestTraits
import Testing

/// What a new user and an operator trip over, round four (issue #53, items 2 and 5-8): where the
/// file is, errors that name the file and the reason, a list line that is one URL, and one exit
/// code for an input that can never work.
@Suite("CLI: what a newcomer trips over, round four", .threadOfItsOwn)
struct NewcomerRoundFourTests {
  @Test("the table says where each delivered file is: the cached file, -o's copy, a rescue's output")
  func tableShowsThePath() async throws {
    let server = try TestHTTPServer.start()
    defer { server.stop() }
    let scratch = try Scratch()
    defer { scratch.remove() }
    server.serve("/a.png", body: try Media.bytes("png-rgba.png"))
    let cache = scratch.path + "/c"
    let fetched = try await CLI.run(["fetch", "--cache-dir", cache, server.url("/a.png")])
    #expect(fetched.status == 0, "\(fetched.stderr)")
    let json = try await CLI.run(["fetch", "--json", "--cache-dir", cache, server.url("/a.png")])
    let cached = try #require(json.jsonLines.first?["path"] as? String)
    #expect(cached.hasPrefix(cache + "/"))
    #expect(fetched.stdout.contains("↳ file: \(cached)"), "\(fetched.stdout)")

    let copy = scratch.path + "/copy.png"
    let copied = try await CLI.run(["fetch", "--cache-dir", cache, "-o", copy, server.url("/a.png")])
    #expect(copied.stdout.contains("↳ file: \(copy)"), "\(copied.stdout)")

    // validate names no second path: the input is the file.
    let local = scratch.path + "/local.png"
    try Data(try Media.bytes("png-rgba.png")).write(to: URL(fileURLWithPath: local))
    let validated = try await CLI.run(["validate", local])
    #expect(validated.status == 0)
    #expect(!validated.stdout.contains("↳ file:"), "\(validated.stdout)")
  }

  @Test("a key file that is missing, a directory or unreadable is named with the system's reason")
  func keyFileReasons() async throws {
    let scratch = try Scratch()
    defer { scratch.remove() }
    let missing = scratch.path + "/missing-keys"
    let unreadable = scratch.path + "/unreadable-keys"
    try "5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a\n".write(toFile: unreadable, atomically: false, encoding: .utf8)
    try #require(chmod(unreadable, 0) == 0)
    var cases: [(String, String)] = [
      (missing, "No such file or directory"), (scratch.path, "Is a directory"),
    ]
    // root reads a mode-000 file anyway: the permission case is asked only where it can happen.
    if geteuid() != 0 { cases.append((unreadable, "Permission denied")) }
    for (path, reason) in cases {
      let sign = try await CLI.run(["sign", "--key-file", path, "https://example.com/a.jpg"])
      #expect(sign.status == 2)
      #expect(sign.stderr.contains("The key file \(path) cannot be read: \(reason)."), "\(sign.stderr)")
      let serve = try await CLI.run(["serve", "--listen", "127.0.0.1:0", "--key-file", path])
      #expect(serve.status == 2)
      #expect(serve.stderr.contains("The key file \(path) cannot be read: \(reason)."), "\(serve.stderr)")
    }
    let list = try await CLI.run(["prefetch", scratch.path])
    #expect(list.status == 2)
    #expect(list.stderr.contains("cannot read '\(scratch.path)': Is a directory"), "\(list.stderr)")
    let absent = try await CLI.run(["prefetch", missing])
    #expect(absent.stderr.contains("cannot read '\(missing)': No such file or directory"), "\(absent.stderr)")
  }

  @Test(
    "a list line is one URL: 'not a url' and 'URL trailing words' are invalid_url naming their line, the rest still run, exit 2"
  )
  func listLines() async throws {
    let server = try TestHTTPServer.start()
    defer { server.stop() }
    let scratch = try Scratch()
    defer { scratch.remove() }
    server.serve("/a.png", body: try Media.bytes("png-rgba.png"))
    let list = """
      # a campaign
      not a url
        \(server.url("/a.png"))\t
      \(server.url("/a.png")) trailing words

      """
    let file = scratch.path + "/list.txt"
    try list.write(toFile: file, atomically: false, encoding: .utf8)
    for run in [
      try await CLI.run(["prefetch", "--json", "--cache-dir", scratch.path + "/c", file]),
      try await CLI.run(["fetch", "--json", "--cache-dir", scratch.path + "/c", "-"], stdin: list),
    ] {
      #expect(run.status == 2, "\(run.stderr)")
      let records = run.jsonLines
      #expect(records.count == 3, "\(run.stdout)")
      let byInput = Dictionary(
        records.map { ($0["input"] as? String ?? "", $0) }, uniquingKeysWith: { a, _ in a })
      let notURL = try #require(byInput["not a url"])
      #expect((notURL["error"] as? [String: Any])?["code"] as? String == "invalid_url")
      #expect(((notURL["error"] as? [String: Any])?["message"] as? String)?.contains("Line 2") == true)
      let trailing = try #require(byInput[server.url("/a.png") + " trailing words"])
      #expect(((trailing["error"] as? [String: Any])?["message"] as? String)?.contains("Line 4") == true)
      // The trimmed line is fetched as it is.
      #expect(byInput[server.url("/a.png")]?["outcome"] as? String == "accepted")
    }
    // The origin saw the good URL only, never one with the words dropped.
    #expect(server.allRequests.allSatisfy { $0.target == "/a.png" })
    let signed = try await CLI.run(
      ["sign", "--key-file", try keyFile(scratch), "-"], stdin: "not a url\n")
    #expect(signed.status == 2)
    #expect(signed.stderr.contains("Line 1 is not one URL"), "\(signed.stderr)")
    #expect(signed.stdout.isEmpty)
  }

  @Test(
    "a malformed URL exits 2 in fetch, validate's sibling commands and sign alike; a failed fetch still exits 4"
  )
  func malformedURLExitCode() async throws {
    let server = try TestHTTPServer.start()
    defer { server.stop() }
    let scratch = try Scratch()
    defer { scratch.remove() }
    server.serve("/a.png", body: try Media.bytes("png-rgba.png"))
    let cache = scratch.path + "/c"
    let malformed = try await CLI.run(["fetch", "--cache-dir", cache, "http://exa mple.com/a.png"])
    #expect(malformed.status == 2, "\(malformed.stdout)\(malformed.stderr)")
    #expect(malformed.stdout.contains("invalid_url"))
    // One malformed among good ones: the good one is still fetched, and the status says fix it.
    let mixed = try await CLI.run(["fetch", "--json", "--cache-dir", cache, "ftp:/x", server.url("/a.png")])
    #expect(mixed.status == 2)
    #expect(mixed.jsonLines.last?["outcome"] as? String == "accepted")
    let signed = try await CLI.run(["sign", "--key-file", try keyFile(scratch), "ftp:/x"])
    #expect(signed.status == 2)
    let failed = try await CLI.run(["fetch", "--cache-dir", cache, server.url("/missing.png")])
    #expect(failed.status == 4)
  }

  @Test(
    "the ATS warning: once in the table with its count, with each result in JSON, never under android, off with --no-ats-warning"
  )
  func transportSecurityOnce() async throws {
    let server = try TestHTTPServer.start()
    defer { server.stop() }
    let scratch = try Scratch()
    defer { scratch.remove() }
    server.serve("/a.png", body: try Media.bytes("png-rgba.png"))
    server.serve("/b.gif", body: try Media.bytes("gif-static.gif"))
    let urls = [server.url("/a.png"), server.url("/b.gif")]
    let cache = ["--cache-dir", scratch.path + "/c"]
    let table = try await CLI.run(["fetch"] + cache + urls)
    #expect(table.status == 0, "\(table.stderr)")
    let said = table.stdout.components(separatedBy: "ats: fetched over plain HTTP").count - 1
    #expect(said == 1, "\(table.stdout)")
    #expect(table.stdout.contains("warning (2 results): ats:"), "\(table.stdout)")
    #expect(table.stdout.contains("--no-ats-warning"))

    let json = try await CLI.run(["fetch", "--json"] + cache + urls)
    for record in json.jsonLines {
      let warnings = (record["warnings"] as? [String]) ?? []
      #expect(warnings.contains { $0.hasPrefix("ats:") }, "\(record)")
    }
    let android = try await CLI.run(["fetch", "--json", "--profile", "android"] + cache + urls)
    #expect(android.status == 0, "\(android.stderr)")
    for record in android.jsonLines {
      let warnings = (record["warnings"] as? [String]) ?? []
      #expect(!warnings.contains { $0.hasPrefix("ats:") }, "\(record)")
    }
    for arguments in [["fetch", "--no-ats-warning"], ["fetch", "--json", "--no-ats-warning"]] {
      let off = try await CLI.run(arguments + cache + urls)
      #expect(off.status == 0)
      #expect(!off.stdout.contains("ats:"), "\(off.stdout)")
    }
  }

  @Test("the docs' cache paths are the ones the cache writes, and they type no count a command prints")
  func readmeFigures() async throws {
    let server = try TestHTTPServer.start()
    defer { server.stop() }
    let scratch = try Scratch()
    defer { scratch.remove() }
    server.serve("/a.png", body: try Media.bytes("png-rgba.png"))
    let cache = scratch.path + "/c"
    let run = try await CLI.run(["fetch", "--json", "--cache-dir", cache, server.url("/a.png")])
    let path = try #require(run.jsonLines.first?["path"] as? String)
    let sha = try #require(run.jsonLines.first?["sha256"] as? String)
    let relative = String(path.dropFirst(cache.count + 1))
    #expect(relative == "v3/content/\(sha.prefix(1))/\(sha).png", "\(relative)")
    let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
      .deletingLastPathComponent()
    // The README and every page it leads to: docs/ and the library's DocC articles (the library
    // example and the cache's listing moved from the README to the articles).
    let catalog = root.appendingPathComponent("Sources/AttachmentKit/AttachmentKit.docc")
    var pages = [root.appendingPathComponent("README.md")]
    for directory in [root.appendingPathComponent("docs"), catalog] {
      let names = try FileManager.default.contentsOfDirectory(atPath: directory.path)
      pages += names.filter { $0.hasSuffix(".md") }.sorted().map { directory.appendingPathComponent($0) }
    }
    var texts: [String: String] = [:]
    for page in pages { texts[page.lastPathComponent] = try String(contentsOf: page, encoding: .utf8) }
    // The library example's comment and the cache article's listing, in the shape just seen.
    let example = "\"…/v3/content/<its first hex digit>/<sha256>.png\""
    #expect(texts["GettingStarted.md"]?.contains(example) == true)
    #expect(texts["TheCache.md"]?.contains("$CACHE/v3/content/a/abcd…ef.jpg") == true)
    // run-samples.sh prints how many near-misses its rescue turned into attachments; the
    // README said "31 of 47 today" while the manifest had 52 and the command rescued 37.
    for (name, text) in texts {
      #expect(text.range(of: #"\(\d+ of \d+ today"#, options: .regularExpression) == nil, "\(name)")
    }
  }

  @Test("completions offer --profile's values")
  func profileCompletions() async throws {
    let bash = try await CLI.run(["completion", "bash"])
    #expect(bash.stdout.contains("'ios android ios-compact'"), "\(bash.stdout.suffix(2000))")
    let zsh = try await CLI.run(["completion", "zsh"])
    #expect(zsh.stdout.contains("(ios android ios-compact)"))
    let fish = try await CLI.run(["completion", "fish"])
    #expect(fish.stdout.contains("'ios android ios-compact'"))
  }

  @Test("a deadline passed while downloading says the same in the table and in JSON")
  func deadlineMessageOnce() async throws {
    let server = try TestHTTPServer.start()
    defer { server.stop() }
    let scratch = try Scratch()
    defer { scratch.remove() }
    var messages: Set<String> = []
    // (1 s: time enough for the process to start and connect on a loaded machine, so that the
    // deadline passes while the body is awaited, in both runs)
    for round in 0..<2 {
      let cache = ["--cache-dir", scratch.path + "/c\(round)"]
      let table = try await CLI.run(["fetch", "--deadline", "1s"] + cache + [server.url("/fault/never")])
      let line = table.stdout.split(separator: "\n").first { $0.contains("deadline_exceeded:") }
      messages.insert(
        String(line?.split(separator: ":", maxSplits: 1).last ?? "").trimmingCharacters(in: .whitespaces))
      let json = try await CLI.run(
        ["fetch", "--json", "--deadline", "1s"] + cache + [server.url("/fault/never")])
      let error = json.jsonLines.first?["error"] as? [String: Any]
      #expect(error?["code"] as? String == "deadline_exceeded")
      messages.insert(error?["message"] as? String ?? "")
    }
    #expect(messages == ["The deadline passed before the download finished."], "\(messages)")
  }

  @Test("the summary says rejected, as each result does")
  func rejectedEverywhere() async throws {
    let server = try TestHTTPServer.start()
    defer { server.stop() }
    let scratch = try Scratch()
    defer { scratch.remove() }
    server.serve("/page.jpg", body: Array("<html>not an image</html>".utf8))
    let run = try await CLI.run(["fetch", "--cache-dir", scratch.path + "/c", server.url("/page.jpg")])
    #expect(run.status == 1)
    #expect(run.stdout.contains("rejected  "))
    #expect(run.stdout.contains("0 accepted, 1 rejected, 0 failed"), "\(run.stdout)")
    #expect(!run.stdout.contains("refused,"))
  }

  private func keyFile(_ scratch: Scratch) throws -> String {
    let path = scratch.path + "/keys"
    try String(repeating: "5a", count: 32).write(toFile: path, atomically: false, encoding: .utf8)
    return path
  }
}
