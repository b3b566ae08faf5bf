import ArgumentParsing
import Testing

/// Reading by key: a misspelt name or a key of the wrong kind does not compile; a key the
/// command does not declare (or declares otherwise) is reported by `declares(_:)` and stops the
/// program when read.
@Suite("Key contract")
struct KeyContractTests {
  @Test("reads declared keys of every kind")
  func declaredKeys() throws {
    // Given fetch's parsed arguments
    let parsed = try arguments("fetch", "--json", "--deadline", "2.5", "u")

    // Then each kind reads through its own key
    #expect(parsed[Fetch.json])
    #expect(!parsed[Fetch.noCache])
    #expect(parsed[Fetch.cacheDirectory] == nil)
    #expect(try parsed[Fetch.deadline] == 2.5)
    #expect(parsed[Fetch.url] == "u")
  }

  @Test("tells declared keys from undeclared ones and ones declared otherwise")
  func declares() throws {
    // Given fetch's parsed arguments
    let parsed = try arguments("fetch", "u")

    // Then its own keys are declared
    #expect(parsed.declares(Fetch.json) && parsed.declares(Fetch.deadline) && parsed.declares(Fetch.url))
    // and prefetch's --concurrency is not
    #expect(!parsed.declares(Prefetch.concurrency))
    // nor is a key of fetch's name with other help, another kind, or another reading
    #expect(!parsed.declares(FlagKey(long: "json", short: "j", help: "Other help.")))
    #expect(
      !parsed.declares(OptionKey<String>.option(long: "json", help: "Print the result as one JSON object.")))
    #expect(
      !parsed.declares(
        OptionKey<Double>.number(long: "deadline", valueName: "SECONDS", help: Fetch.deadline.spec.help)))
    #expect(
      !parsed.declares(
        OptionKey<String>.option(long: "deadline", valueName: "SECONDS", help: Fetch.deadline.spec.help)))
  }

  @Test("stops the program on reading a key the command does not declare")
  func undeclaredKey() async {
    // Given fetch's parsed arguments
    // When prefetch's --concurrency is read
    // Then the process stops
    await #expect(processExitsWith: .failure) {
      let parsed = try arguments("fetch", "u")
      _ = try parsed[Prefetch.concurrency]
    }
  }

  @Test("stops the program on reading a key for a declared name that reads it otherwise")
  func keyDeclaredOtherwise() async {
    // Given fetch's parsed arguments, whose --deadline is a positive number
    // When --deadline is read as text
    // Then the process stops
    await #expect(processExitsWith: .failure) {
      let parsed = try arguments("fetch", "--deadline", "3", "u")
      _ =
        parsed[
          OptionKey<String>.option(long: "deadline", valueName: "SECONDS", help: Fetch.deadline.spec.help)]
    }
  }
}
