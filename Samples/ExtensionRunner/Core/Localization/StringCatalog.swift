import Foundation

/// Reads a `Localizable.xcstrings` string catalog (JSON) for one language.
///
/// The value of a key is `strings.<key>.localizations.<lang>.stringUnit.value` for the asked
/// language, else for its base language (`pt` for `pt-BR`), else for the catalog's
/// `sourceLanguage`. A key the catalog lists without any usable value is its own source text
/// (Xcode omits the source language's value when it equals the key). Plural and device
/// variations are not resolved: such a key falls back the same way.
public enum StringCatalog {
  /// What a catalog gives for one language.
  public struct Resolved: Sendable, Equatable {
    /// The catalog's `sourceLanguage` (empty when it has none).
    public var sourceLanguage: String
    /// Every key with its value.
    public var entries: [String: String]
    /// The keys whose value came from a fallback (the source language, or the key itself).
    public var fallbacks: Set<String>
  }

  /// The values of `data` (a string catalog) for `locale`.
  /// - Throws: ``LocalizationFileError`` when it is not JSON or not a catalog (no `strings` object).
  public static func parse(_ data: Data, locale: String) throws(LocalizationFileError) -> Resolved {
    let object: Any
    do {
      object = try JSONSerialization.jsonObject(with: data)
    } catch {
      throw LocalizationFileError("not valid JSON: not a string catalog")
    }
    guard let catalog = object as? [String: Any], let strings = catalog["strings"] as? [String: Any] else {
      throw LocalizationFileError("a JSON file without a \"strings\" object: not a string catalog")
    }
    let source = catalog["sourceLanguage"] as? String ?? ""
    var languages = [locale]
    if let base = locale.split(whereSeparator: { $0 == "-" || $0 == "_" }).first, base != locale[...] {
      languages.append(String(base))
    }
    if !source.isEmpty, !languages.contains(source) { languages.append(source) }

    var resolved = Resolved(sourceLanguage: source, entries: [:], fallbacks: [])
    for (key, entry) in strings {
      let localizations = (entry as? [String: Any])?["localizations"] as? [String: Any] ?? [:]
      var value: String?
      for (index, language) in languages.enumerated() {
        let unit = (localizations[language] as? [String: Any])?["stringUnit"] as? [String: Any]
        if let text = unit?["value"] as? String {
          value = text
          if index > 0 && language == source { resolved.fallbacks.insert(key) }
          break
        }
      }
      if value == nil { resolved.fallbacks.insert(key) }
      resolved.entries[key] = value ?? key
    }
    return resolved
  }
}
