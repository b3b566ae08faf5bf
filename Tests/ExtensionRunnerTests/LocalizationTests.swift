import Foundation
import TestSupport
import TestTraits
import Testing

@testable import ExtensionRunnerCore

/// Reading `.strings` files and string catalogs, and filling `loc-args` in as iOS does.
/// On the worker thread for CPU-bound tests (`.cpuBound`): the hostile files and catalogs are parsed for up to a second.
@Suite("Localization: strings files, catalogs and loc-args", .cpuBound)
struct LocalizationTests {
  // MARK: - .strings files

  /// The bytes of `text` as UTF-16 with a byte-order mark.
  static func utf16(_ text: String, littleEndian: Bool) -> Data {
    var bytes: [UInt8] = littleEndian ? [0xFF, 0xFE] : [0xFE, 0xFF]
    for unit in text.utf16 {
      let (low, high) = (UInt8(unit & 0xFF), UInt8(unit >> 8))
      bytes += littleEndian ? [low, high] : [high, low]
    }
    return Data(bytes)
  }

  static let sample = """
    /* A block comment,
       over two lines, with "quotes" and = ; inside */
    // A line comment "x" = "y";
    "GREETING" = "Hello, %@!";   // trailing comment
    "QUOTE" = "She said \\"hi\\" \\\\ back\\nthen\\tleft";
    "UNICODE" = "caf\\U00E9 \\U00e9 \\UD83D\\UDE00 \\u00E9";
    unquoted_key.1 = "unquoted key";
    "UNQUOTED_VALUE" = bare-word;
    "SHORTHAND";
    "OCTAL" = "\\101\\0end";
    "OTHER_ESCAPE" = "\\q";
    "MULTI
    LINE" = "raw
    newline";
    "REPEATED" = "first"; "REPEATED" = "last";
    "ÉMOJI 😀" = "non-ASCII key";
    """

  static let expected: [String: String] = [
    "GREETING": "Hello, %@!",
    "QUOTE": "She said \"hi\" \\ back\nthen\tleft",
    "UNICODE": "café é 😀 é",
    "unquoted_key.1": "unquoted key",
    "UNQUOTED_VALUE": "bare-word",
    "SHORTHAND": "SHORTHAND",
    "OCTAL": "A\u{0}end",
    "OTHER_ESCAPE": "q",
    "MULTI\nLINE": "raw\nnewline",
    "REPEATED": "last",
    "ÉMOJI 😀": "non-ASCII key",
  ]

  @Test("UTF-8: comments, escapes, \\U with surrogate pairs, unquoted keys and values, shorthand")
  func utf8File() throws {
    let parsed = try StringsFile.parse(Data(Self.sample.utf8))
    #expect(parsed.encoding == "UTF-8")
    #expect(parsed.entries == Self.expected)
    let withBOM = try StringsFile.parse(Data([0xEF, 0xBB, 0xBF] + Array(Self.sample.utf8)))
    #expect(withBOM.entries == Self.expected)
  }

  @Test("UTF-16 with a byte-order mark, little and big endian, reads the same entries")
  func utf16File() throws {
    let little = try StringsFile.parse(Self.utf16(Self.sample, littleEndian: true))
    let big = try StringsFile.parse(Self.utf16(Self.sample, littleEndian: false))
    #expect(little.encoding == "UTF-16LE")
    #expect(big.encoding == "UTF-16BE")
    #expect(little.entries == Self.expected)
    #expect(big.entries == Self.expected)
  }

  @Test("CRLF line endings and an empty file")
  func lineEndingsAndEmpty() throws {
    let crlf = "// c\r\n\"A\" = \"1\";\r\n/* x */\r\n\"B\" = \"2\";\r\n"
    #expect(try StringsFile.parse(Data(crlf.utf8)).entries == ["A": "1", "B": "2"])
    #expect(try StringsFile.parse(Data()).entries.isEmpty)
    #expect(try StringsFile.parse(Data("  // only a comment".utf8)).entries.isEmpty)
  }

  /// Files that must be refused, with the words the message must hold.
  static let badFiles: [(String, [UInt8], String)] = [
    (
      "unterminated string", Array(#""A" = "never closed;"#.utf8),
      "line 1, column 7: a quoted string is never closed"
    ),
    (
      "unterminated comment", Array("\"A\" = \"1\";\n/* open".utf8),
      "line 2, column 1: a /* comment is never closed"
    ),
    (
      "missing semicolon", Array("\"A\" = \"1\"\n\"B\" = \"2\";".utf8),
      "line 2, column 1: expected ';' after the value"
    ),
    ("missing equals", Array(#""A" "1";"#.utf8), "expected '=' after the key"),
    ("missing value", Array(#""A" = ;"#.utf8), "expected a value, found ';'"),
    ("end after key", Array(#""A" ="#.utf8), "expected a value, found the end of the file"),
    ("stray character", Array("\"A\" = \"1\";\n\n  }".utf8), "line 3, column 3: expected a key, found '}'"),
    ("bad \\U", Array(#""A" = "\U12G4";"#.utf8), "four hexadecimal digits"),
    ("lone high surrogate", Array(#""A" = "\UD83Dx";"#.utf8), "lone high surrogate"),
    ("high then not low", Array(#""A" = "\UD83D\U0041";"#.utf8), "not followed by a low surrogate"),
    ("lone low surrogate", Array(#""A" = "\UDE00";"#.utf8), "lone low surrogate"),
    ("backslash at the end", Array(#""A" = "\"#.utf8), "a backslash at the end of the file"),
    ("invalid UTF-8", [0x22, 0x41, 0x22, 0x3D, 0x22, 0xC3, 0x28, 0x22, 0x3B], "neither UTF-8 nor UTF-16"),
    ("odd UTF-16", [0xFF, 0xFE, 0x22, 0x00, 0x41], "odd number of bytes"),
    ("unpaired surrogate in UTF-16", [0xFF, 0xFE, 0x3D, 0xD8, 0x41, 0x00], "unpaired surrogate"),
    (
      "UTF-16 without a BOM", Array("\"A\"=\"1\";".utf16.flatMap { [UInt8($0 & 0xFF), UInt8($0 >> 8)] }),
      "expected '=' after the key"
    ),
  ]

  @Test("a bad file is refused whole, with the line, column and reason", arguments: badFiles.indices)
  func badFile(_ index: Int) {
    let (name, bytes, message) = Self.badFiles[index]
    do {
      let parsed = try StringsFile.parse(Data(bytes))
      Issue.record("\(name): parsed as \(parsed.entries)")
    } catch {
      #expect(error.message.contains(message), "\(name): \(error.message)")
    }
  }

  // MARK: - String catalogs

  static let catalog = """
    {
      "sourceLanguage" : "en",
      "strings" : {
        "GREETING" : { "localizations" : {
          "en" : { "stringUnit" : { "state" : "translated", "value" : "Hello, %@" } },
          "fr" : { "stringUnit" : { "state" : "translated", "value" : "Bonjour, %@" } } } },
        "ONLY_ENGLISH" : { "localizations" : {
          "en" : { "stringUnit" : { "state" : "translated", "value" : "English only" } } } },
        "Key is its own source" : { },
        "PLURAL" : { "localizations" : { "fr" : { "variations" : { "plural" : { } } } } },
        "ODD" : 7
      },
      "version" : "1.0"
    }
    """

  @Test("a catalog with two locales: the asked one, else the source language, else the key")
  func catalogLocales() throws {
    let english = try StringCatalog.parse(Data(Self.catalog.utf8), locale: "en")
    let french = try StringCatalog.parse(Data(Self.catalog.utf8), locale: "fr")
    #expect(english.sourceLanguage == "en")
    #expect(english.entries["GREETING"] == "Hello, %@")
    #expect(french.entries["GREETING"] == "Bonjour, %@")
    #expect(french.entries["ONLY_ENGLISH"] == "English only")
    #expect(french.fallbacks.contains("ONLY_ENGLISH"))
    #expect(!french.fallbacks.contains("GREETING"))
    #expect(french.entries["Key is its own source"] == "Key is its own source")
    #expect(french.entries["PLURAL"] == "PLURAL")
    #expect(french.entries["ODD"] == "ODD")
    #expect(french.entries["ABSENT"] == nil)
    // A regional locale falls back to its base language first.
    let canadian = try StringCatalog.parse(Data(Self.catalog.utf8), locale: "fr-CA")
    #expect(canadian.entries["GREETING"] == "Bonjour, %@")
    #expect(!canadian.fallbacks.contains("GREETING"))
    let german = try StringCatalog.parse(Data(Self.catalog.utf8), locale: "de")
    #expect(german.entries["GREETING"] == "Hello, %@")
    #expect(german.fallbacks.contains("GREETING"))
  }

  @Test(
    "what is not a catalog is refused", arguments: ["{", "[]", #"{"strings": []}"#, #"{"version": "1.0"}"#])
  func notACatalog(_ text: String) {
    #expect(throws: LocalizationFileError.self) { try StringCatalog.parse(Data(text.utf8), locale: "en") }
  }

  @Test("the table loader picks the format by name or content and refuses bad or huge files")
  func tableLoader() throws {
    let directory = FileManager.default.temporaryDirectory.path + "/localization-\(UUID().uuidString)"
    try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: directory) }
    func file(_ name: String, _ data: Data) throws -> String {
      let path = directory + "/" + name
      try writeTestFile(data, to: path)
      return path
    }
    let catalogPath = try file("Localizable.xcstrings", Data(Self.catalog.utf8))
    let french = try LocalizationTable.load(LocalizationSource(path: catalogPath, locale: "fr"))
    #expect(french.entries["GREETING"] == "Bonjour, %@")
    #expect(french.summary == "Localizable.xcstrings, string catalog, fr (source en), 5 keys")
    // A catalog under another name is recognised by its first character.
    let renamed = try file("strings.json", Data(Self.catalog.utf8))
    #expect(try LocalizationTable.load(LocalizationSource(path: renamed)).entries["GREETING"] == "Hello, %@")
    let strings = try file("Localizable.strings", Self.utf16(#""A" = "1";"#, littleEndian: true))
    let table = try LocalizationTable.load(LocalizationSource(path: strings))
    #expect(table.entries == ["A": "1"])
    #expect(table.summary == "Localizable.strings, UTF-16LE, 1 keys")
    let huge = try file("huge.strings", Data(count: StringsFile.largestFile + 1))
    #expect(throws: LocalizationFileError("huge.strings is over 4 MiB")) {
      try LocalizationTable.load(LocalizationSource(path: huge))
    }
    #expect(throws: LocalizationFileError.self) {
      try LocalizationTable.load(LocalizationSource(path: directory + "/absent.strings"))
    }
    #expect(throws: LocalizationFileError.self) {
      try LocalizationTable.load(LocalizationSource(path: directory))
    }
  }

  // MARK: - Formats

  @Test("%@ in order, positional %n$@ out of order and repeated, %% literal")
  func formatArguments() {
    #expect(LocalizedFormat.format("%@ sent %@", arguments: ["Ana", "3"]).text == "Ana sent 3")
    #expect(
      LocalizedFormat.format("%2$@ photos from %1$@", arguments: ["Ana", "3"]).text == "3 photos from Ana")
    #expect(LocalizedFormat.format("%1$@, %1$@ and %2$@", arguments: ["a", "b"]).text == "a, a and b")
    #expect(LocalizedFormat.format("100%% of %@", arguments: ["it"]).text == "100% of it")
    #expect(LocalizedFormat.format("%%@ is literal", arguments: ["x"]).text == "%@ is literal")
    #expect(LocalizedFormat.format("no specifiers", arguments: ["x"]).text == "no specifiers")
    #expect(LocalizedFormat.format("ünïcödé %@ 😀", arguments: ["✓"]).text == "ünïcödé ✓ 😀")
  }

  @Test("%d, %i, %ld, %.2f, %s and the like insert the argument's text (iOS loc-args are strings)")
  func otherConversions() {
    #expect(
      LocalizedFormat.format("%d photos, %i videos", arguments: ["3", "2"]).text == "3 photos, 2 videos")
    #expect(LocalizedFormat.format("%ld/%lld/%lu", arguments: ["1", "2", "3"]).text == "1/2/3")
    #expect(LocalizedFormat.format("%.2f km, %5s", arguments: ["1.5", "x"]).text == "1.5 km, x")
    #expect(LocalizedFormat.format("%2$d of %1$d", arguments: ["10", "4"]).text == "4 of 10")
  }

  @Test("too few arguments leave the specifier empty; what is not a specifier is kept")
  func missingArgumentsAndNonSpecifiers() {
    let few = LocalizedFormat.format("%@ and %@ and %3$@", arguments: ["one"])
    #expect(few.text == "one and  and ")
    #expect(few.missingArguments == 2)
    #expect(LocalizedFormat.format("%0$@|%99999999999999$@", arguments: ["a"]).text == "|")
    #expect(LocalizedFormat.format("50%", arguments: []).text == "50%")
    #expect(LocalizedFormat.format("%q %n %*d %1$", arguments: ["a"]).text == "%q %n %*d %1$")
    #expect(LocalizedFormat.format("%", arguments: ["a"]).missingArguments == 0)
  }

  @Test("a format that repeats a long argument is cut at the limit")
  func resultLimit() {
    let argument = String(repeating: "x", count: 1000)
    let result = LocalizedFormat.format(String(repeating: "%1$@", count: 1000), arguments: [argument])
    #expect(result.truncated)
    #expect(result.text.unicodeScalars.count == LocalizedFormat.largestResult)
    #expect(!LocalizedFormat.format("%@", arguments: [argument]).truncated)
  }

  // MARK: - The alert

  @Test("loc keys and args are read from aps.alert; wrong types are noted, numbers used as text")
  func readAlert() throws {
    let payload = try NotificationPayload.read(
      Data(
        """
        {"aps": {"alert": {"title": "plain", "title-loc-key": "T", "title-loc-args": ["a", 2, 1.5, null],
                           "subtitle-loc-key": 5, "loc-key": "B", "loc-args": "not an array"}}}
        """.utf8))
    #expect(payload.localization.title == LocalizedText(key: "T", arguments: ["a", "2", "1.5", ""]))
    #expect(payload.localization.subtitle == nil)
    #expect(payload.localization.body == LocalizedText(key: "B"))
    #expect(payload.title == "plain")
    #expect(payload.problems.count == 3)
    let orphan = try NotificationPayload.read(Data(#"{"aps": {"alert": {"loc-args": ["x"]}}}"#.utf8))
    #expect(orphan.localization.isEmpty)
    #expect(orphan.problems == ["aps.alert.loc-args without loc-key: ignored"])
  }

  @Test("resolution: the table's value as the format, a missing key shown as itself")
  func resolve() {
    let localization = AlertLocalization(
      title: LocalizedText(key: "T", arguments: ["Ana"]), subtitle: nil,
      body: LocalizedText(key: "MISSING_KEY", arguments: ["x"]))
    let table = LocalizationTable(entries: ["T": "From %@"])
    let resolution = localization.resolve(with: table)
    #expect(resolution.title == "From Ana")
    #expect(resolution.subtitle == nil)
    #expect(resolution.body == "MISSING_KEY")
    #expect(resolution.missingKeys == ["MISSING_KEY"])
    let noTable = localization.resolve(with: nil)
    #expect(noTable.title == "T")
    #expect(noTable.missingKeys == ["T", "MISSING_KEY"])
  }
}
