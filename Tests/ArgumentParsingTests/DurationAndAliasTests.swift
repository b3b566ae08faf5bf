import Testing

@testable import ArgumentParsing

/// Durations with units (`500ms`, `2s`, `1m`), older option names kept as aliases, and help
/// examples that still paste into a shell once wrapped.
@Suite("Durations, aliases and pasteable examples")
struct DurationAndAliasTests {
  @Test(
    "a duration is seconds or a number with a unit",
    arguments: [
      ("25", 25.0), ("2.5", 2.5), ("500ms", 0.5), ("2s", 2.0), ("1m", 60.0), ("1.5m", 90.0), ("1h", 3600.0),
      ("7d", 604_800.0), (".5s", 0.5),
    ])
  func durations(text: String, seconds: Double) {
    let key = OptionKey<Double>.duration(long: "deadline", help: "")
    guard case .success(let value) = key.convert(text, "--deadline") else {
      Issue.record("\(text) did not read")
      return
    }
    #expect(abs(value - seconds) < 1e-9, "\(text)")
  }

  @Test(
    "anything else names the option, the units and what it got",
    arguments: ["", "ms", "2x", "2 s", "1m30s", "-2s", "0", "0ms", "nan", "infs", "2sm", "0x10s", "5mss"])
  func badDurations(text: String) {
    let key = OptionKey<Double>.duration(long: "deadline", bound: .positive, help: "")
    #expect(
      NumberValueTests.failure(key, text)
        == "--deadline expects a positive duration in seconds or with a unit (500ms, 2s, 1m, 1h), got '\(text)'"
    )
  }

  @Test("zero is a duration where the bound allows it")
  func zero() {
    let key = OptionKey<Double>.duration(long: "poster-time-seconds", bound: .nonNegative, help: "")
    guard case .success(let value) = key.convert("0s", "--poster-time-seconds") else {
      Issue.record("0s did not read")
      return
    }
    #expect(value == 0)
  }

  @Test("an option's older name reads the same value, and help names it")
  func aliases() throws {
    let key = OptionKey<Int64>.byteCount(long: "max-cache-bytes", bound: .positive, help: "The limit.")
      .aliased("max-bytes")
    #expect(key.spec.name == "max-cache-bytes")
    #expect(key.spec.aliases == ["max-bytes"])
    #expect(HelpEntry(key.spec).help == "The limit. (Also --max-bytes, its older name.)")
    let reader = ArgumentReader(
      commandPath: ["attachkit", "cache", "gc"], specs: [key.spec], builtInLongNames: [])
    for words in [["--max-bytes", "1KiB"], ["--max-cache-bytes", "1KiB"], ["--max-bytes=1KiB"]] {
      let parsed = try reader.read(words[...])
      #expect(try parsed[key] == 1024, "\(words)")
    }
  }

  @Test("a long example is wrapped with a line continuation on every line but the last, within 80 columns")
  func pasteableExamples() {
    let example =
      "  ATTACHKIT_KEY_FILE=keys attachkit sign --expires 1h --encrypt --base https://media.example.com https://cdn.example.com/push/2026/12/05/campaign-123/hero.jpg"
    let lines = TextWrapping.commandLine(example)
    #expect(lines.count >= 2)
    #expect(lines.allSatisfy { $0.count <= TextWrapping.width }, "\(lines)")
    #expect(lines.dropLast().allSatisfy { $0.hasSuffix(" \\") }, "\(lines)")
    #expect(!(lines.last ?? "").hasSuffix("\\"))
    #expect(lines.dropFirst().allSatisfy { $0.hasPrefix("      ") }, "\(lines)")
    // Joined as a shell joins them, the words are the example's.
    let joined = lines.map { $0.hasSuffix(" \\") ? String($0.dropLast(2)) : $0 }.joined(separator: " ")
    #expect(joined.split(separator: " ") == example.split(separator: " "))
    #expect(TextWrapping.commandLine("  attachkit fetch URL") == ["  attachkit fetch URL"])
  }
}
