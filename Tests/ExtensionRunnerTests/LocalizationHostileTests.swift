import Foundation
import TestTraits
import Testing

@testable import ExtensionRunnerCore

/// Hostile `.strings` files and string catalogs: refused or read whole, never a crash, and
/// linear work. Each test runs on a thread of its own, not the shared worker of the CPU-bound
/// suites: its one-minute time limit (what turns a quadratic parser into a failure) must count
/// its own parse, not its wait behind a minute of other suites' probing.
@Suite("Localization: hostile files", .threadOfItsOwn)
struct LocalizationHostileTests {
  @Test(
    "hostile files: no crash, work linear in the size (1 MiB of one unclosed comment or string)",
    .timeLimit(.minutes(1)))
  func hostileFiles() throws {
    // Each is refused at once rather than re-scanned per character; a quadratic parser would
    // take minutes over 1 MiB, a linear one milliseconds (no timing asserted; the one-minute
    // time limit turns a hang into a failure).
    let size = 1024 * 1024
    let openComment = Data("/*".utf8 + [UInt8](repeating: 0x2A, count: size - 2))
    #expect(throws: LocalizationFileError.self) { try StringsFile.parse(openComment) }
    let openString = Data("\"".utf8 + [UInt8](repeating: 0x5C, count: size - 1))
    #expect(throws: LocalizationFileError.self) { try StringsFile.parse(openString) }
    let manyEntries = String(repeating: "a=b;", count: size / 4)
    #expect(try StringsFile.parse(Data(manyEntries.utf8)).entries == ["a": "b"])
    let nul = try StringsFile.parse(Data(#""A" = "x"#.utf8 + [0] + #"y";"#.utf8))
    #expect(nul.entries["A"] == "x\u{0}y")
  }

  @Test("a hostile catalog: 100,000 nested arrays, or 20,000 keys, never crashes", .timeLimit(.minutes(1)))
  func hostileCatalog() throws {
    let deep = Data(("{\"strings\": " + String(repeating: "[", count: 100_000)).utf8)
    #expect(throws: LocalizationFileError.self) { try StringCatalog.parse(deep, locale: "en") }
    let many = (0..<20_000).map { #""k\#($0)": {"localizations": {"en": {"stringUnit": {"value": "v"}}}}"# }
    let wide = Data(
      (#"{"sourceLanguage": "en", "strings": {"# + many.joined(separator: ",") + "}}").utf8)
    #expect(try StringCatalog.parse(wide, locale: "fr").entries.count == 20_000)
  }
}
