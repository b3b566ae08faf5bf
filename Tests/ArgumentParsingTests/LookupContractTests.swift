import ArgumentParsing
import Testing

/// Looking up a name the command does not declare is a programming error that stops the program.
@Suite("Lookup contract")
struct LookupContractTests {
  @Test("stops the program on a flag lookup of an undeclared name")
  func undeclaredFlag() async {
    // Given fetch's parsed arguments
    // When a flag it does not declare is looked up
    // Then the process stops
    await #expect(processExitsWith: .failure) {
      let parsed = try arguments("fetch", "u")
      _ = parsed.flag("jsno")
    }
  }

  @Test("stops the program on a lookup of the wrong kind")
  func wrongKind() async {
    // Given fetch's parsed arguments
    // When its flag is read as an option
    // Then the process stops
    await #expect(processExitsWith: .failure) {
      let parsed = try arguments("fetch", "u")
      _ = parsed.string("json")
    }
  }

  @Test("reads declared names of every kind without stopping")
  func declaredNames() throws {
    // Given fetch's parsed arguments
    let parsed = try arguments("fetch", "u")

    // Then each kind reads its own names
    #expect(!parsed.flag("json"))
    #expect(parsed.string("cache-dir") == nil)
    #expect(parsed.positional("url") == "u")
  }
}
