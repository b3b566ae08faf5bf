import Testing

@testable import ArgumentParsing

/// Every way of writing options and flags, read against `attachkit fetch`.
@Suite("Option syntax")
struct OptionSyntaxTests {
  @Test("reads --name value, --name=value and -x value alike")
  func optionForms() throws {
    // Given the three spellings of the same option
    let forms = [["--cache-dir", "/tmp/c"], ["--cache-dir=/tmp/c"], ["-d", "/tmp/c"]]

    for form in forms {
      // When each is parsed before the URL
      let parsed = try #require(try router.parse(["fetch"] + form + ["https://x/a"]).arguments)

      // Then the option has the value and the URL is the positional
      #expect(parsed[Fetch.cacheDirectory] == "/tmp/c")
      #expect(parsed[Fetch.url] == "https://x/a")
    }
  }

  @Test("keeps everything after the first = of --name=value, even an empty value")
  func inlineValues() throws {
    // Given values holding = and nothing at all
    let withEquals = try arguments("fetch", "--header=X-A=b=c", "u")
    let empty = try arguments("fetch", "--cache-dir=", "u")

    // Then the value is everything after the first =
    #expect(withEquals[Fetch.header] == "X-A=b=c")
    #expect(empty[Fetch.cacheDirectory] == "")
  }

  @Test("sets flags in long and short form, and leaves absent ones false")
  func flags() throws {
    // Given one command line with --json and one with -j and --no-cache
    let long = try arguments("fetch", "--json", "u")
    let short = try arguments("fetch", "-j", "--no-cache", "u")

    // Then the flags given are true and the others false
    #expect(long[Fetch.json])
    #expect(!long[Fetch.noCache])
    #expect(short[Fetch.json])
    #expect(short[Fetch.noCache])
  }

  @Test("lets the last of a repeated option win, and keeps every value for values(of:)")
  func repeatedOption() throws {
    // Given an option given three times
    let parsed = try arguments("fetch", "--header", "A: 1", "u", "--header=B: 2", "--header", "C: 3")

    // Then the key reads the last value and values(of:) all of them in order
    #expect(parsed[Fetch.header] == "C: 3")
    #expect(parsed.values(of: Fetch.header) == ["A: 1", "B: 2", "C: 3"])
    // and an option never given is nil and empty
    #expect(parsed[Fetch.cacheDirectory] == nil)
    #expect(parsed.values(of: Fetch.cacheDirectory).isEmpty)
  }

  @Test("accepts options before, between and after positionals")
  func optionsAnywhere() throws {
    // Given options on both sides of the positionals
    let parsed = try arguments("validate", "a.png", "--json", "b.pdf")

    // Then both positionals and the flag are read
    #expect(parsed[Validate.json])
    #expect(parsed[Validate.files] == ["a.png", "b.pdf"])
  }

  @Test("treats every word after -- as a positional, even ones that look like options")
  func doubleDash() throws {
    // Given words after -- that look like options
    let parsed = try arguments("validate", "--json", "--", "--json", "-j", "--", "-")

    // Then only the flag before -- is a flag; the rest are files
    #expect(parsed[Validate.json])
    #expect(parsed[Validate.files] == ["--json", "-j", "--", "-"])
  }

  @Test("treats a lone - as a positional (standard input)")
  func dashIsPositional() throws {
    // Given prefetch reading standard input
    let parsed = try arguments("prefetch", "-", "--concurrency", "4")

    // Then - is the file and the option is still read
    #expect(parsed[Prefetch.file] == "-")
    #expect(try parsed[Prefetch.concurrency] == 4)
  }

  @Test("takes - and negative numbers as option values")
  func dashLikeValues() throws {
    // Given values that start with a dash but are not options
    let parsed = try arguments("prefetch", "--retries", "-3", "--format", "-", "--total", "-0.5")

    // Then they are values, not options (as stored, before any key converts them)
    #expect(parsed.options["retries"] == ["-3"])
    #expect(parsed.options["format"] == ["-"])
    #expect(parsed.options["total"] == ["-0.5"])
    #expect(try parsed[Prefetch.retries] == -3)
  }

  @Test("reports an option without its value, naming the option as typed and the value expected")
  func missingValue() {
    // Given an option at the end, and one followed by another option or by --
    let atEnd = usageError("fetch", "u", "--cache-dir")
    let beforeOption = usageError("fetch", "-d", "--json", "u")
    let beforeDoubleDash = usageError("fetch", "--deadline", "--", "u")

    // Then each is a missing value for that option
    #expect(atEnd?.message == "missing value for '--cache-dir' (expected DIR)")
    #expect(beforeOption?.message == "missing value for '-d' (expected DIR)")
    #expect(beforeDoubleDash?.message == "missing value for '--deadline' (expected SECONDS)")
    #expect(atEnd?.commandPath == ["attachkit", "fetch"])
  }

  @Test("refuses a value given to a flag")
  func flagWithValue() {
    // Given --json=yes
    let error = usageError("fetch", "--json=yes", "u")

    // Then the flag is named and the value refused
    #expect(error?.message == "--json does not take a value")
  }

  @Test("does not combine short flags or attach short values")
  func noCombinedShorts() {
    // Given -jd and -d/tmp, which this parser does not support
    // Then each is an unknown option, with no suggestion for a short one
    #expect(usageError("fetch", "-jd", "u")?.message == "unknown option '-jd'")
    #expect(usageError("fetch", "-x", "u")?.message == "unknown option '-x'")
  }
}

extension ParseOutcome {
  /// The arguments of a `.run` outcome, or `nil`.
  var arguments: ParsedArguments? {
    if case .run(_, let arguments) = self { return arguments }
    return nil
  }
}
