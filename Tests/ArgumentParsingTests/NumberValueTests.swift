import Testing

@testable import ArgumentParsing

/// The converting keys: whole numbers, decimals, byte counts, choices, and the errors they throw.
@Suite("Typed values")
struct NumberValueTests {
  @Test("reads whole numbers as Int and Int64, with or without a sign")
  func wholeNumbers() throws {
    // Given whole numbers in several spellings
    let parsed = try arguments("prefetch", "-c", "8", "--retries", "+2", "--total", "9000000000")

    // Then they read back as numbers
    #expect(try parsed[Prefetch.concurrency] == 8)
    #expect(try parsed[Prefetch.retries] == 2)
    #expect(try parsed[Prefetch.total] == 9_000_000_000)
    // and an option not given is nil, not an error
    #expect(try parsed[Prefetch.maximumBytes] == nil)
  }

  @Test(
    "names the option, what it expects and what it got for a bad whole number",
    arguments: [
      ("abc", NumberBound.positive, "--concurrency expects a positive whole number, got 'abc'"),
      ("0", .positive, "--concurrency expects a positive whole number, got '0'"),
      ("-1", .nonNegative, "--concurrency expects a non-negative whole number, got '-1'"),
      ("1.5", .any, "--concurrency expects a whole number, got '1.5'"),
      ("", .any, "--concurrency expects a whole number, got ''"),
      (" 4", .any, "--concurrency expects a whole number, got ' 4'"),
      ("0x10", .any, "--concurrency expects a whole number, got '0x10'"),
      (
        "99999999999999999999", .any,
        "--concurrency expects a whole number, got '99999999999999999999' (out of range)"
      ),
    ])
  func badWholeNumbers(text: String, bound: NumberBound, message: String) throws {
    // Given an Int key for --concurrency with this bound
    let key = OptionKey<Int>.integer(long: "concurrency", bound: bound, help: "")

    // When a malformed or out-of-bound value is converted
    // Then the message says exactly what was wrong
    #expect(Self.failure(key, text) == message)
  }

  @Test("throws a bad value's message as a usage error about the command that read it")
  func badValueThrows() throws {
    // Given prefetch with a concurrency of 0, which its key bounds as positive
    let parsed = try arguments("prefetch", "--concurrency=0")

    // When it is read, then the error is about prefetch
    #expect(
      throws: UsageError(
        "--concurrency expects a positive whole number, got '0'", commandPath: ["attachkit", "prefetch"])
    ) { try parsed[Prefetch.concurrency] }
  }

  /// The message converting `text` with `key` fails with, or `nil` when it converts.
  static func failure<Value>(_ key: OptionKey<Value>, _ text: String) -> String? {
    if case .failure(let invalid) = key.convert(text, "--" + key.spec.name) { return invalid.message }
    return nil
  }

  @Test("reads decimals as Double, and rejects nan, inf, hex and words")
  func decimals() throws {
    // Given well-formed deadlines
    for (text, value) in [("2.5", 2.5), (".5", 0.5), ("30", 30.0), ("1e3", 1000.0)] {
      let parsed = try arguments("fetch", "--deadline", text, "u")
      #expect(try parsed[Fetch.deadline] == value)
    }

    // Given malformed or out-of-bound ones
    let cases: [(String, NumberBound, String)] = [
      ("nan", .any, "--deadline expects a number, got 'nan'"),
      ("inf", .any, "--deadline expects a number, got 'inf'"),
      ("0x1p3", .any, "--deadline expects a number, got '0x1p3'"),
      ("soon", .nonNegative, "--deadline expects a non-negative number, got 'soon'"),
      ("-1", .nonNegative, "--deadline expects a non-negative number, got '-1'"),
      ("0", .positive, "--deadline expects a positive number, got '0'"),
      ("1e999", .any, "--deadline expects a number, got '1e999' (out of range)"),
    ]
    for (text, bound, message) in cases {
      // Then each error names the option and quotes the value
      let key = OptionKey<Double>.number(long: "deadline", bound: bound, help: "")
      #expect(Self.failure(key, text) == message)
    }
  }

  @Test("reads byte sizes from options, refusing bad units and (when positive) zero")
  func byteCounts() throws {
    // Given gc with a size in MiB
    let parsed = try arguments("cache", "gc", "--max-bytes", "5MiB")

    // Then it reads as bytes
    #expect(try parsed[CacheGC.maximumBytes] == 5 * 1024 * 1024)

    // Given a malformed size and a zero one
    let bad = try arguments("cache", "gc", "--max-bytes", "10XB")
    let zero = try arguments("cache", "gc", "--max-bytes", "0")

    // Then the errors name the option and show what a size looks like
    #expect(
      throws: UsageError(
        "--max-bytes expects a byte size such as 500, 10MB or 5MiB, got '10XB'",
        commandPath: ["attachkit", "cache", "gc"])
    ) { try bad[CacheGC.maximumBytes] }
    #expect(try zero[CacheGC.maximumBytes] == 0)
    let positive = OptionKey<Int64>.byteCount(long: "max-bytes", bound: .positive, help: "")
    #expect(
      Self.failure(positive, "0")
        == "--max-bytes expects a positive byte size such as 500, 10MB or 5MiB, got '0'")
  }

  @Test("reads a choice, suggesting the nearest one for a typo")
  func choices() throws {
    // Given prefetch with a valid and two invalid formats
    let good = try arguments("prefetch", "--format", "json")
    let typo = try arguments("prefetch", "--format", "jsno")
    let far = try arguments("prefetch", "--format", "xml")

    // Then the valid one reads back and the others list the choices
    #expect(try good[Prefetch.format] == .json)
    #expect(
      throws: UsageError(
        "--format expects one of text, json; got 'jsno' (did you mean 'json'?)",
        commandPath: ["attachkit", "prefetch"])
    ) { try typo[Prefetch.format] }
    #expect(
      throws: UsageError(
        "--format expects one of text, json; got 'xml'", commandPath: ["attachkit", "prefetch"])
    ) { try far[Prefetch.format] }
  }

  @Test("reads the last value of a repeated numeric option")
  func lastNumberWins() throws {
    // Given -c twice, the first one malformed
    let parsed = try arguments("prefetch", "-c", "x", "-c", "3")

    // Then only the last counts
    #expect(try parsed[Prefetch.concurrency] == 3)
  }

  @Test("makes usage errors about the command for checks of the caller's own")
  func callerErrors() throws {
    // Given parsed arguments of prefetch
    let parsed = try arguments("prefetch", "-")

    // When the caller reports a conflict of its own
    let error = parsed.usageError("--json and --format text conflict")

    // Then it is about prefetch
    #expect(error == UsageError("--json and --format text conflict", commandPath: ["attachkit", "prefetch"]))
  }
}
