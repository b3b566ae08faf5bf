import ArgumentParsing
import Testing

/// How bare words are handed to positionals.
@Suite("Positionals")
struct PositionalTests {
  /// `cp SOURCE... DEST [MODE]`-like command: a repeating positional before a required one.
  enum Copy: ParsableCommand {
    static let configuration = CommandConfiguration(name: "cp", abstract: "Copies files.")
    static let sources = PositionalKey<[String]>.repeating(
      name: "sources", valueName: "SOURCE", help: "Files to copy.")
    static let destination = PositionalKey<String>.positional(
      name: "destination", valueName: "DEST", help: "Where to.")
    static let arguments: [any ArgumentKey] = [sources, destination]
  }

  /// `pair FIRST [SECOND]`: an optional positional after a required one.
  enum Pair: ParsableCommand {
    static let configuration = CommandConfiguration(name: "pair", abstract: "Takes one or two.")
    static let first = PositionalKey<String>.positional(name: "first", help: "Needed.")
    static let second = PositionalKey<String>.positional(name: "second", help: "Optional.", optional: true)
    static let arguments: [any ArgumentKey] = [first, second]
  }

  @Test("reports a missing required positional by its value name")
  func missingRequired() {
    // Given fetch and validate with no words
    // Then each names the positional it lacks
    #expect(usageError("fetch", "--json")?.message == "missing argument 'URL'")
    #expect(usageError("validate")?.message == "missing argument 'FILE'")
  }

  @Test("reports a word no positional takes")
  func unexpectedWord() {
    // Given two URLs for fetch, which takes one
    let error = usageError("fetch", "u1", "u2")

    // Then the extra word is named
    #expect(error?.message == "unexpected argument 'u2'")
    #expect(error?.commandPath == ["attachkit", "fetch"])
  }

  @Test("leaves an optional positional empty when not given")
  func optionalAbsent() throws {
    // Given prefetch with no file
    let parsed = try arguments("prefetch", "--json")

    // Then the file is nil
    #expect(parsed[Prefetch.file] == nil)
  }

  @Test("gives a repeating positional all words but those later positionals need")
  func repeatingBeforeRequired() throws {
    // Given a cp-like command that is its own root
    let copy = CommandRouter(root: Copy.self)

    // When three words are given
    let parsed = try #require(try copy.parse(["a", "b", "dir"]).arguments)

    // Then the last word is the destination and the others the sources
    #expect(parsed[Copy.sources] == ["a", "b"])
    #expect(parsed[Copy.destination] == "dir")
    #expect(parsed.commandPath == ["cp"])
    // and one word is not enough
    #expect(throws: UsageError("missing argument 'SOURCE'", commandPath: ["cp"])) {
      try copy.parse(["dir"])
    }
  }

  @Test("fills an optional positional only when there are words enough")
  func optionalAfterRequired() throws {
    // Given a command taking FIRST [SECOND]
    let pair = CommandRouter(root: Pair.self)

    // When given one word, then two
    let one = try #require(try pair.parse(["a"]).arguments)
    let two = try #require(try pair.parse(["a", "b"]).arguments)

    // Then the second is filled only from the second word
    #expect(one[Pair.first] == "a" && one[Pair.second] == nil)
    #expect(two[Pair.first] == "a" && two[Pair.second] == "b")
  }

  @Test("treats help as an ordinary word below the groups")
  func helpWordIsPositional() throws {
    // Given a leaf command whose URL happens to be "help"
    let parsed = try arguments("fetch", "help")

    // Then it is the URL
    #expect(parsed[Fetch.url] == "help")
  }
}
