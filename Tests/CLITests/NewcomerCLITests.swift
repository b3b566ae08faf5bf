import Foundation
import TestSupport
import TestTraits
import Testing

/// What a new user trips over (issue #40, item 6): durations with units, one name per option and
/// variable (the old ones still read), messages that name the flag, and help examples that
/// paste into a shell.
@Suite("CLI: what a newcomer trips over", .threadOfItsOwn)
struct NewcomerCLITests {
  @Test(
    "--deadline 300ms ends a stalled fetch at 0.3 s with deadline_exceeded (exit 4); a bad unit is exit 2")
  func durationSuffix() async throws {
    let server = try TestHTTPServer.start()
    defer { server.stop() }
    let scratch = try Scratch()
    defer { scratch.remove() }
    let run = try await CLI.run([
      "fetch", "--json", "--deadline", "300ms", "--cache-dir", scratch.path, server.url("/fault/never"),
    ])
    #expect(run.status == 4, "\(run.stderr)")
    let record = try #require(run.jsonLines.first)
    #expect((record["error"] as? [String: Any])?["code"] as? String == "deadline_exceeded")
    // The deadline is 0.3 s, not 300: the request's own time, as the run measured it (the
    // process's start and the test's queueing are not in it; a loaded CI run took 15 s for
    // the whole process once).
    let milliseconds = try #require((record["timings"] as? [String: Any])?["totalMs"] as? Double)
    #expect(milliseconds >= 300 && milliseconds < 60_000, "\(record)")

    let bad = try await CLI.run(["fetch", "--deadline", "2x", server.url("/a.png")])
    #expect(bad.status == 2)
    #expect(
      bad.stderr.contains("--deadline expects a positive duration in seconds or with a unit"), "\(bad.stderr)"
    )
  }

  @Test(
    "cache gc takes --max-cache-bytes (fetch's name) and still --max-bytes; each size variable name is read")
  func oneNamePerOption() async throws {
    let server = try TestHTTPServer.start()
    defer { server.stop() }
    let scratch = try Scratch()
    defer { scratch.remove() }
    for name in ["png-rgba.png", "gif-static.gif", "jpeg-exif.jpg"] {
      server.serve("/\(name)", body: try Media.bytes(name))
    }
    let cache = scratch.path + "/c"
    let urls = ["png-rgba.png", "gif-static.gif", "jpeg-exif.jpg"].map { server.url("/\($0)") }
    #expect(try await CLI.run(["fetch", "--cache-dir", cache] + urls).status == 0)
    func cachedBytes() async throws -> Int {
      let stats = try await CLI.run(["cache", "stats", "--json", "--cache-dir", cache])
      return stats.jsonLines.first?["bytes"] as? Int ?? -1
    }
    let full = try await cachedBytes()
    #expect(full > 2000)
    for option in ["--max-bytes", "--max-cache-bytes"] {
      let gc = try await CLI.run(["cache", "gc", option, "1KB", "--cache-dir", cache])
      #expect(gc.status == 0, "\(option): \(gc.stderr)")
    }
    #expect(try await cachedBytes() < full)
    let help = try await CLI.run(["cache", "gc", "--help"])
    #expect(help.stdout.contains("--max-cache-bytes BYTES"))
    let words = help.stdout.split(whereSeparator: \.isWhitespace).joined(separator: " ")
    #expect(words.contains("(Also --max-bytes, its older name.)"), "\(help.stdout)")
    let manual = try await CLI.run(["man"])
    #expect(manual.stdout.contains("(Also \\-\\-max\\-bytes, its older name.)"))

    // A malformed limit is named by the variable the run read: the new name first, then the old.
    for variable in ["ATTACHKIT_MAX_CACHE_BYTES", "ATTACHKIT_CACHE_MAX_BYTES"] {
      let run = try await CLI.run(
        ["fetch", "--cache-dir", cache, urls[0]], environment: [variable: "lots"])
      #expect(run.status == 2, "\(variable)")
      #expect(run.stderr.contains("\(variable) expects a positive byte size"), "\(run.stderr)")
    }
  }

  @Test(
    "a loopback origin without --allow-private-networks: blocked_address names the flag, not the property")
  func messageNamesTheFlag() async throws {
    let server = try TestHTTPServer.start()
    defer { server.stop() }
    server.serve("/a.png", body: try Media.bytes("png-rgba.png"))
    let scratch = try Scratch()
    defer { scratch.remove() }
    let run = try await CLI.run(
      ["fetch", "--json", "--cache-dir", scratch.path, server.url("/a.png")],
      environment: ["ATTACHKIT_ALLOW_PRIVATE_NETWORKS": "0"])
    #expect(run.status == 4)  // the request refused, not the file: a failure
    let error = try #require(run.jsonLines.first?["error"] as? [String: Any])
    #expect(error["code"] as? String == "blocked_address")
    let message = error["message"] as? String ?? ""
    #expect(
      message.contains("--allow-private-networks") && !message.contains("allowPrivateNetworks"), "\(message)")
  }

  @Test("every command's help examples are shell that parses (bash -n), each line within 80 columns")
  func examplesPaste() async throws {
    let commands = [
      ["fetch"], ["prefetch"], ["validate"], ["rescue"], ["serve"], ["sign"], ["cache"], ["cache", "gc"],
      ["completion"], ["man"],
    ]
    var seen = 0
    for command in commands {
      let help = try await CLI.run(command + ["--help"])
      #expect(help.status == 0, "\(command)")
      let lines = help.stdout.split(separator: "\n", omittingEmptySubsequences: false)
      #expect(lines.allSatisfy { $0.count <= 80 }, "\(command): a line over 80 columns")
      guard let start = lines.firstIndex(of: "EXAMPLES:") else { continue }
      let examples = lines[(start + 1)...].prefix { !$0.isEmpty }.joined(separator: "\n")
      seen += 1
      let syntax = try await CLI.run(program: "/bin/bash", ["-n", "-c", examples])
      #expect(syntax.status == 0, "\(command): \(syntax.stderr)\n\(examples)")
      // A wrapped example continues with a backslash: a line that starts with an option or a
      // URL (which the shell would run as a command of its own) follows one that ends in " \".
      let exampleLines = examples.split(separator: "\n")
      for (index, line) in exampleLines.enumerated() {
        let word = line.drop { $0 == " " }
        if word.hasPrefix("-") || word.hasPrefix("http") {
          #expect(index > 0 && exampleLines[index - 1].hasSuffix(" \\"), "\(command): \(line)")
        }
      }
    }
    #expect(seen >= 4)
  }
}
