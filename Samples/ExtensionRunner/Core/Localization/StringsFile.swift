import Foundation

/// Why a strings file or string catalog cannot be used, in one sentence for the trace.
public struct LocalizationFileError: Error, Equatable, CustomStringConvertible {
  /// The sentence (it may quote the file: escape it before printing).
  public var message: String

  /// Makes an error.
  public init(_ message: String) {
    self.message = message
  }

  /// The sentence.
  public var description: String { message }
}

/// Reads an old-style `Localizable.strings` file: the NeXTSTEP/OpenStep property-list
/// dictionary without its braces, as Xcode writes it.
///
/// - Encoding: UTF-16 with a byte-order mark (either endianness), or UTF-8 with or without one.
///   Anything else (invalid UTF-8, an odd number of UTF-16 bytes, unpaired surrogates) is refused.
/// - Entries: `KEY = VALUE;`, each a quoted string (`"…"`) or an unquoted word of letters, digits
///   and `_$+/:.-`; `"KEY";` alone means `KEY = KEY;`. A repeated key keeps its last value.
/// - Comments: `/* … */` and `// …` up to the end of the line.
/// - Escapes in quoted strings: `\"`, `\\`, `\n`, `\t`, `\r`, `\a`, `\b`, `\f`, `\v`, `\0`–`\377`
///   (octal), `\Uxxxx` and `\uxxxx` (a UTF-16 code unit; a surrogate pair makes one character);
///   any other escaped character stands for itself, as CoreFoundation reads it.
///
/// The file is hostile input: the work is linear in its size, nothing recurses, and any syntax
/// error refuses the whole file (as iOS fails to load it) with the line and column.
public enum StringsFile {
  /// The largest file read, in bytes: an app's strings for one language are far smaller.
  public static let largestFile = 4 * 1024 * 1024

  /// The entries of a `.strings` file and the name of its encoding (`UTF-8`, `UTF-16LE`,
  /// `UTF-16BE`), or why not.
  /// - Throws: ``LocalizationFileError`` naming the encoding problem or the first syntax error.
  public static func parse(_ data: Data) throws(LocalizationFileError) -> (
    entries: [String: String], encoding: String
  ) {
    let (text, encoding) = try decode(data)
    var parser = Parser(scalars: Array(text.unicodeScalars))
    return (try parser.entries(), encoding)
  }

  /// The text of the file and the name of its encoding.
  /// - Throws: ``LocalizationFileError`` when it is neither valid UTF-8 nor UTF-16 with a BOM.
  public static func decode(_ data: Data) throws(LocalizationFileError) -> (String, String) {
    let bytes = [UInt8](data)
    if bytes.starts(with: [0xFF, 0xFE]) || bytes.starts(with: [0xFE, 0xFF]) {
      let littleEndian = bytes[0] == 0xFF
      let name = littleEndian ? "UTF-16LE" : "UTF-16BE"
      let body = bytes.dropFirst(2)
      guard body.count.isMultiple(of: 2) else {
        throw LocalizationFileError("\(name) with an odd number of bytes (\(bytes.count))")
      }
      var units: [UInt16] = []
      units.reserveCapacity(body.count / 2)
      var index = body.startIndex
      while index < body.endIndex {
        let (first, second) = (UInt16(body[index]), UInt16(body[index + 1]))
        units.append(littleEndian ? first | second << 8 : first << 8 | second)
        index += 2
      }
      guard let text = String(validating: units, as: UTF16.self) else {
        throw LocalizationFileError("not valid \(name): an unpaired surrogate")
      }
      return (text, name)
    }
    let hasBOM = bytes.starts(with: [0xEF, 0xBB, 0xBF])
    guard let text = String(validating: hasBOM ? bytes.dropFirst(3) : bytes[...], as: UTF8.self) else {
      throw LocalizationFileError("neither UTF-8 nor UTF-16 with a byte-order mark")
    }
    return (text, "UTF-8")
  }

  /// A single pass over the file's scalars.
  private struct Parser {
    let scalars: [Unicode.Scalar]
    var position = 0

    /// Every entry up to the end of the file.
    mutating func entries() throws(LocalizationFileError) -> [String: String] {
      var entries: [String: String] = [:]
      while true {
        try skipSpaceAndComments()
        guard position < scalars.count else { return entries }
        let key = try string(what: "a key")
        try skipSpaceAndComments()
        if peek == ";" {
          position += 1
          entries[key] = key
          continue
        }
        try expect("=", after: "the key")
        try skipSpaceAndComments()
        let value = try string(what: "a value")
        try skipSpaceAndComments()
        try expect(";", after: "the value")
        entries[key] = value
      }
    }

    var peek: Unicode.Scalar? { position < scalars.count ? scalars[position] : nil }

    mutating func expect(_ scalar: Unicode.Scalar, after what: String) throws(LocalizationFileError) {
      guard peek == scalar else {
        let found = peek.map { "'\(Character($0))'" } ?? "the end of the file"
        throw error("expected '\(Character(scalar))' after \(what), found \(found)")
      }
      position += 1
    }

    /// Skips white space, `/* … */` and `// …`.
    mutating func skipSpaceAndComments() throws(LocalizationFileError) {
      while let scalar = peek {
        if scalar.properties.isWhitespace || scalar == "\u{FEFF}" {
          position += 1
        } else if scalar == "/", position + 1 < scalars.count, scalars[position + 1] == "*" {
          let start = position
          position += 2
          while position + 1 < scalars.count, !(scalars[position] == "*" && scalars[position + 1] == "/") {
            position += 1
          }
          guard position + 1 < scalars.count else {
            position = start
            throw error("a /* comment is never closed")
          }
          position += 2
        } else if scalar == "/", position + 1 < scalars.count, scalars[position + 1] == "/" {
          while let next = peek, next != "\n", next != "\r" { position += 1 }
        } else {
          return
        }
      }
    }

    /// A quoted string or an unquoted word.
    mutating func string(what: String) throws(LocalizationFileError) -> String {
      guard let first = peek else { throw error("expected \(what), found the end of the file") }
      if first == "\"" { return try quoted() }
      var word = String.UnicodeScalarView()
      while let scalar = peek, Self.isWordScalar(scalar) {
        word.append(scalar)
        position += 1
      }
      guard !word.isEmpty else { throw error("expected \(what), found '\(Character(first))'") }
      return String(word)
    }

    static func isWordScalar(_ scalar: Unicode.Scalar) -> Bool {
      scalar.isASCII
        && (scalar.properties.isAlphabetic || ("0"..."9").contains(scalar)
          || "_$+/:.-".unicodeScalars.contains(scalar))
    }

    /// A `"…"` string with its escapes resolved.
    mutating func quoted() throws(LocalizationFileError) -> String {
      let start = position
      position += 1
      var out = String.UnicodeScalarView()
      while true {
        guard let scalar = peek else {
          position = start
          throw error("a quoted string is never closed")
        }
        position += 1
        switch scalar {
        case "\"": return String(out)
        case "\\": try escape(into: &out)
        default: out.append(scalar)
        }
      }
    }

    /// The escape after a backslash.
    mutating func escape(into out: inout String.UnicodeScalarView) throws(LocalizationFileError) {
      guard let scalar = peek else { throw error("a backslash at the end of the file") }
      position += 1
      switch scalar {
      case "n": out.append("\n")
      case "t": out.append("\t")
      case "r": out.append("\r")
      case "a": out.append("\u{07}")
      case "b": out.append("\u{08}")
      case "f": out.append("\u{0C}")
      case "v": out.append("\u{0B}")
      case "U", "u":
        let unit = try hexUnit()
        if UTF16.isLeadSurrogate(unit) {
          guard position + 1 < scalars.count, scalars[position] == "\\",
            scalars[position + 1] == "U" || scalars[position + 1] == "u"
          else { throw error("\\U\(hex(unit)) is a lone high surrogate") }
          position += 2
          let low = try hexUnit()
          guard UTF16.isTrailSurrogate(low) else {
            throw error("\\U\(hex(unit)) is not followed by a low surrogate")
          }
          let value = 0x10000 + (UInt32(unit - 0xD800) << 10) + UInt32(low - 0xDC00)
          guard let combined = Unicode.Scalar(value) else { throw error("an invalid surrogate pair") }
          out.append(combined)
        } else if let single = Unicode.Scalar(unit) {
          out.append(single)
        } else {
          throw error("\\U\(hex(unit)) is a lone low surrogate")
        }
      case "0"..."7":
        var value = scalar.value - 0x30
        var digits = 1
        while digits < 3, let next = peek, ("0"..."7").contains(next) {
          value = value * 8 + next.value - 0x30
          position += 1
          digits += 1
        }
        // Three octal digits reach 0o777; CoreFoundation reads them as one byte's code point.
        out.append(Unicode.Scalar(UInt8(truncatingIfNeeded: value)))
      default: out.append(scalar)
      }
    }

    /// Exactly four hexadecimal digits.
    mutating func hexUnit() throws(LocalizationFileError) -> UInt16 {
      var value: UInt16 = 0
      for _ in 0..<4 {
        guard let scalar = peek, let digit = Self.hexValue(scalar) else {
          throw error("\\U must be followed by four hexadecimal digits")
        }
        value = value << 4 | digit
        position += 1
      }
      return value
    }

    static func hexValue(_ scalar: Unicode.Scalar) -> UInt16? {
      switch scalar {
      case "0"..."9": UInt16(scalar.value - 0x30)
      case "a"..."f": UInt16(scalar.value - 0x61 + 10)
      case "A"..."F": UInt16(scalar.value - 0x41 + 10)
      default: nil
      }
    }

    func hex(_ unit: UInt16) -> String {
      let digits = String(unit, radix: 16, uppercase: true)
      return String(repeating: "0", count: 4 - digits.count) + digits
    }

    /// An error at the current position, with its line and column (both from 1).
    func error(_ message: String) -> LocalizationFileError {
      var line = 1
      var column = 1
      var index = 0
      let end = min(position, scalars.count)
      while index < end {
        if scalars[index] == "\n"
          || (scalars[index] == "\r" && (index + 1 >= end || scalars[index + 1] != "\n"))
        {
          line += 1
          column = 1
        } else if scalars[index] != "\r" {
          column += 1
        }
        index += 1
      }
      return LocalizationFileError("line \(line), column \(column): \(message)")
    }
  }
}
