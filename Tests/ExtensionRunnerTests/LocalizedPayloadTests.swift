import AttachmentKit
import Foundation
import TestSupport
import TestTraits
import Testing

/// `loc-key` alerts through the runner: `--strings` and `--locale`, the sample files, and the
/// failures that must never lose the notification.
@Suite("Localized alerts through the runner", .cpuBound)
struct LocalizedPayloadTests {
  static let englishTitle = "New photo from Ana"
  static let englishSubtitle = "Album: \"Lisbon trip\""
  static let englishBody = "Ana shared 3 photos with you. 100% yours."

  @Test("the sample strings file localizes the sample payload; its image is delivered too")
  func sampleStringsFile() async throws {
    // Given the sample localized payload and the sample Localizable.strings
    let fixture = try RunnerFixture("loc-strings")
    defer { fixture.close() }

    // When the binary runs it
    let run = try await fixture.runBinary(
      fixture.commonArguments + [
        "--trace", "--strings", Repository.payload("Localizable.strings"),
        Repository.payload("localized.json"),
      ])

    // Then title, subtitle and body are the English strings filled with the loc-args
    #expect(run.status == 0, "\(run.standardError)")
    let output = try run.output()
    #expect(output.title == Self.englishTitle)
    #expect(output.subtitle == Self.englishSubtitle)
    #expect(output.body == Self.englishBody)
    #expect(output.attachments.map(\.typeHint) == ["public.jpeg"])
    // localized before the media was asked for
    let trace = try #require(output.trace)
    let localize = try #require(trace.first { $0.name == "localize" })
    let fetch = try #require(trace.first { $0.name.hasPrefix("attachment ") })
    #expect(localize.outcome == "ok")
    #expect(localize.detail.contains("Localizable.strings, UTF-8, 3 keys"))
    #expect(try #require(localize.endMs) <= fetch.startMs)
  }

  @Test("the sample string catalog in two locales, and a third that falls back to the source language")
  func sampleCatalog() async throws {
    let fixture = try RunnerFixture("loc-catalog")
    defer { fixture.close() }
    let catalog = Repository.payload("Localizable.xcstrings")
    let payload = Repository.payload("localized.json")

    let french = await fixture.runInProcess(
      fixture.commonArguments + ["--strings", catalog, "--locale", "fr", payload])
    let english = await fixture.runInProcess(fixture.commonArguments + ["--strings", catalog, payload])
    let german = await fixture.runInProcess(
      fixture.commonArguments + ["--trace", "--strings", catalog, "--locale", "de", payload])

    // Positional arguments out of order: the French body puts %2$@ before %1$@.
    let fr = try french.output()
    #expect(fr.title == "Nouvelle photo de Ana")
    #expect(fr.subtitle == "Album : « Lisbon trip »")
    #expect(fr.body == "3 photos partagées par Ana. 100 % à vous.")
    let en = try english.output()
    #expect((en.title, en.subtitle, en.body) == (Self.englishTitle, Self.englishSubtitle, Self.englishBody))
    let de = try german.output()
    #expect((de.title, de.body) == (Self.englishTitle, Self.englishBody))
    let step = try #require(de.trace?.first { $0.name == "localize" })
    #expect(step.detail.contains("fallback language for"))
  }

  @Test("a UTF-16 strings file (with BOM) localizes end to end")
  func utf16StringsFile() async throws {
    let fixture = try RunnerFixture("loc-utf16")
    defer { fixture.close() }
    let path = fixture.scratch + "/Localizable.strings"
    try writeTestFile(
      LocalizationTests.utf16(
        """
        /* UTF-16 big endian */
        "T" = "Für %@";
        "B" = "%2$@ · %1$@ · 😀";
        """, littleEndian: false), to: path)
    let payload = try fixture.write(
      "p.json",
      #"{"aps": {"alert": {"title-loc-key": "T", "title-loc-args": ["Zoë"], "loc-key": "B", "loc-args": ["eins", "zwei"]}, "mutable-content": 1}}"#
    )

    let run = await fixture.runInProcess(fixture.commonArguments + ["--trace", "--strings", path, payload])

    let output = try run.output()
    #expect(output.title == "Für Zoë")
    #expect(output.body == "zwei · eins · 😀")
    #expect(output.trace?.first { $0.name == "localize" }?.detail.contains("UTF-16BE") == true)
  }

  @Test("a missing key shows the key itself and is traced; the found ones are still localized")
  func missingKey() async throws {
    let fixture = try RunnerFixture("loc-missing")
    defer { fixture.close() }
    let payload = try fixture.write(
      "p.json",
      #"{"aps": {"alert": {"title-loc-key": "NEW_PHOTO_TITLE", "title-loc-args": ["Ana"], "loc-key": "NO_SUCH_KEY", "loc-args": ["x"]}, "mutable-content": 1}}"#
    )

    let run = await fixture.runInProcess(
      fixture.commonArguments + ["--trace", "--strings", Repository.payload("Localizable.strings"), payload])

    #expect(run.status == 0)
    let output = try run.output()
    #expect(output.title == Self.englishTitle)
    #expect(output.body == "NO_SUCH_KEY")
    let step = try #require(output.trace?.first { $0.name == "localize" })
    #expect(step.outcome == "failed")
    #expect(step.detail.contains("missing key NO_SUCH_KEY: shown as is"))
    #expect(run.standardError.contains("all steps done"))
  }

  /// Strings files that cannot be used, and what the trace must say.
  enum BadStrings: String, CaseIterable, Sendable {
    case syntax, escapeInFile, notUTF8, missingFile, directory, fifo, notACatalog
  }

  @Test(
    "a bad strings file is traced (escaped) and the notification still goes out, keys shown",
    arguments: BadStrings.allCases)
  func badStringsFile(_ bad: BadStrings) async throws {
    let fixture = try RunnerFixture("loc-bad")
    defer { fixture.close() }
    let path: String
    let expected: String
    switch bad {
    case .syntax:
      path = try fixture.write("Localizable.strings", "\"NEW_PHOTO_BODY\" = \"never closed;\n")
      expected = "bad strings file: Localizable.strings: line 1, column 20: a quoted string is never closed"
    case .escapeInFile:
      path = try fixture.write("Localizable.strings", "\"A\" = \"1\";\n\u{1B}[31m\u{9B}2J")
      expected = "line 2, column 1: expected a key, found '\(Redaction.escapeControlCharacters("\u{1B}"))'"
    case .notUTF8:
      path = fixture.scratch + "/Localizable.strings"
      try writeTestFile(Data([0x22, 0x41, 0x22, 0x3D, 0x22, 0xFF, 0x22, 0x3B]), to: path)
      expected = "neither UTF-8 nor UTF-16 with a byte-order mark"
    case .missingFile:
      path = fixture.scratch + "/absent.strings"
      expected = "bad strings file: cannot open"
    case .directory:
      path = fixture.scratch
      expected = "is not a regular file"
    case .fifo:
      // Opening a FIFO without a writer would block: it is refused before it is opened.
      path = fixture.scratch + "/Localizable.strings"
      try #require(mkfifo(path, 0o600) == 0)
      expected = "is not a regular file"
    case .notACatalog:
      path = try fixture.write("Localizable.xcstrings", #"{"strings": ["not", "a", "catalog"]}"#)
      expected = "not a string catalog"
    }

    let run = try await fixture.runBinary(
      fixture.commonArguments + ["--trace", "--strings", path, Repository.payload("localized.json")])

    // The notification is delivered with the keys, and its image,
    #expect(run.status == 0, "\(run.standardError)")
    let output = try run.output()
    #expect(output.title == "NEW_PHOTO_TITLE")
    #expect(output.subtitle == "ALBUM_SUBTITLE")
    #expect(output.body == "NEW_PHOTO_BODY")
    #expect(output.attachments.map(\.typeHint) == ["public.jpeg"])
    // and the trace says why, escaped on standard error.
    let step = try #require(output.trace?.first { $0.name == "localize" })
    #expect(step.outcome == "failed")
    #expect(step.detail.contains(expected), "\(step.detail)")
    let line = try #require(run.standardError.split(separator: "\n").first { $0.contains(" localize ") })
    #expect(line.contains(expected))
    #expect(!run.standardError.unicodeScalars.contains { $0 == "\u{1B}" || (0x80...0x9F).contains($0.value) })
  }

  @Test("no --strings: a loc-key alert shows its keys and the trace says so")
  func noStringsFile() async throws {
    let fixture = try RunnerFixture("loc-none")
    defer { fixture.close() }
    let run = await fixture.runInProcess(
      fixture.commonArguments + ["--trace", Repository.payload("localized.json")])
    let output = try run.output()
    #expect((output.title, output.body) == ("NEW_PHOTO_TITLE", "NEW_PHOTO_BODY"))
    #expect(
      output.trace?.first { $0.name == "localize" }?.detail.contains("no strings file (--strings)") == true)
  }

  @Test("without mutable-content the system's content is localized too (as iOS does), and nothing fetched")
  func immutableLocalized() async throws {
    let fixture = try RunnerFixture("loc-immutable")
    defer { fixture.close() }
    let payload = try fixture.write(
      "p.json",
      #"{"aps": {"alert": {"title-loc-key": "NEW_PHOTO_TITLE", "title-loc-args": ["Ana"], "body": "plain"}}, "image-url": "{BASE}/media/png-rgba.png"}"#
    )

    let run = try await fixture.runBinary(
      fixture.commonArguments + [
        "--trace", "--strings", Repository.payload("Localizable.xcstrings"), "--locale", "fr", payload,
      ])

    let output = try run.output()
    #expect(output.title == "Nouvelle photo de Ana")
    #expect(output.body == "plain")
    #expect(output.attachments.isEmpty)
    #expect(output.trace?.first { $0.name == "localize" }?.outcome == "ok")
    #expect(run.standardError.contains("the system, unchanged"))
    #expect(fixture.requestsReceived == 0)
    #expect(!FileManager.default.fileExists(atPath: fixture.cacheDirectory))
  }

  @Test("a payload without loc-key skips localization and keeps its text, even with --strings")
  func plainAlert() async throws {
    let fixture = try RunnerFixture("loc-plain")
    defer { fixture.close() }
    let run = await fixture.runInProcess(
      fixture.commonArguments + [
        "--trace", "--strings", Repository.payload("Localizable.strings"), Repository.payload("image.json"),
      ])
    let output = try run.output()
    #expect(output.title == "Photo from Ana")
    #expect(output.trace?.first { $0.name == "localize" }?.outcome == "skipped")
  }
}
