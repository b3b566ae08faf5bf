import Foundation

/// Where the runner's localized strings come from: `--strings FILE` and `--locale LANG`.
public struct LocalizationSource: Sendable, Equatable {
  /// A `Localizable.strings` or `Localizable.xcstrings` file.
  public var path: String
  /// The language read from a string catalog (`en` by default; a `.strings` file has one only).
  public var locale: String

  /// The default language.
  public static let defaultLocale = "en"

  /// Makes a source.
  public init(path: String, locale: String = LocalizationSource.defaultLocale) {
    self.path = path
    self.locale = locale
  }
}

/// The localized strings of one language: what the app bundle's `Localizable.strings` gives
/// iOS for the device's language.
public struct LocalizationTable: Sendable, Equatable {
  /// Every key with its value.
  public var entries: [String: String]
  /// Keys whose value is a fallback (a catalog's source language, or the key itself).
  public var fallbacks: Set<String>
  /// What was read, for the trace: `Localizable.strings, UTF-16LE, 12 keys`.
  public var summary: String

  /// Makes a table.
  public init(entries: [String: String], fallbacks: Set<String> = [], summary: String = "") {
    self.entries = entries
    self.fallbacks = fallbacks
    self.summary = summary
  }

  /// Reads `source`: a string catalog when the name ends in `.xcstrings` or the text starts
  /// with `{`, else an old-style strings file.
  /// - Throws: ``LocalizationFileError`` when it cannot be read, is not a regular file, is over
  ///   ``StringsFile/largestFile``, or is not a valid file of its format.
  public static func load(_ source: LocalizationSource) throws(LocalizationFileError) -> LocalizationTable {
    let name = (source.path as NSString).lastPathComponent
    // Only a regular file: opening a FIFO would block the critical step until a writer came.
    guard let attributes = try? FileManager.default.attributesOfItem(atPath: source.path) else {
      throw LocalizationFileError("cannot open \(source.path)")
    }
    guard attributes[.type] as? FileAttributeType == .typeRegular else {
      throw LocalizationFileError("\(source.path) is not a regular file")
    }
    guard let handle = FileHandle(forReadingAtPath: source.path) else {
      throw LocalizationFileError("cannot open \(source.path)")
    }
    defer { try? handle.close() }
    let data: Data
    do {
      data = try handle.read(upToCount: StringsFile.largestFile + 1) ?? Data()
    } catch {
      throw LocalizationFileError("cannot read \(source.path)")
    }
    guard data.count <= StringsFile.largestFile else {
      throw LocalizationFileError("\(name) is over \(StringsFile.largestFile / 1024 / 1024) MiB")
    }
    let firstByte = data.first { ![0x20, 0x09, 0x0A, 0x0D].contains($0) }
    if source.path.hasSuffix(".xcstrings") || firstByte == UInt8(ascii: "{") {
      do {
        let catalog = try StringCatalog.parse(data, locale: source.locale)
        return LocalizationTable(
          entries: catalog.entries, fallbacks: catalog.fallbacks,
          summary: "\(name), string catalog, \(source.locale) (source \(catalog.sourceLanguage)), "
            + "\(catalog.entries.count) keys")
      } catch {
        throw LocalizationFileError("\(name): \(error.message)")
      }
    }
    do {
      let (entries, encoding) = try StringsFile.parse(data)
      return LocalizationTable(entries: entries, summary: "\(name), \(encoding), \(entries.count) keys")
    } catch {
      throw LocalizationFileError("\(name): \(error.message)")
    }
  }
}
