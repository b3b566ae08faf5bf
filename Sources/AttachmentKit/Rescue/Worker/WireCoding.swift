/// The worker socket's encoding of `Codable` values, without Foundation (which the library does
/// not link: a command-line hit would map it): a value becomes lines of `path<TAB>scalar`, one
/// per scalar, the path its coding keys joined by dots (an array's elements by index, its
/// count under `#`, an object's own path marked with `{`). A `nil` optional writes no line.
/// Backslashes, tabs and newlines are escaped.
enum WireCoding {
  /// `value` as wire bytes; `nil` when it does not encode.
  static func encode<Value: Encodable>(_ value: Value) -> [UInt8]? {
    let storage = WireStorage()
    do {
      try value.encode(to: WireEncoder(storage: storage, path: []))
    } catch {
      return nil
    }
    var text = ""
    for (path, scalar) in storage.lines {
      text += escape(path) + "\t" + escape(scalar) + "\n"
    }
    return Array(text.utf8)
  }

  /// A `Value` read back from wire bytes; `nil` when they are not a valid encoding of one.
  static func decode<Value: Decodable>(_ type: Value.Type, from bytes: [UInt8]) -> Value? {
    var values: [String: String] = [:]
    for line in String(decoding: bytes, as: UTF8.self).split(separator: "\n") {
      guard let tab = line.firstIndex(of: "\t") else { return nil }
      values[unescape(line[..<tab])] = unescape(line[line.index(after: tab)...])
    }
    return try? Value(from: WireDecoder(values: values, path: []))
  }

  private static func escape(_ text: String) -> String {
    guard text.utf8.contains(where: { $0 == 0x5C || $0 == 0x0A || $0 == 0x09 }) else { return text }
    var out = ""
    for character in text.unicodeScalars {
      switch character {
      case "\\": out += "\\\\"
      case "\n": out += "\\n"
      case "\t": out += "\\t"
      default: out.unicodeScalars.append(character)
      }
    }
    return out
  }

  private static func unescape(_ text: Substring) -> String {
    guard text.contains("\\") else { return String(text) }
    var out = ""
    var escaped = false
    for character in text.unicodeScalars {
      if escaped {
        out.unicodeScalars.append(character == "n" ? "\n" : character == "t" ? "\t" : character)
        escaped = false
      } else if character == "\\" {
        escaped = true
      } else {
        out.unicodeScalars.append(character)
      }
    }
    return out
  }
}

/// The lines an encoding writes, shared by its containers.
private final class WireStorage {
  var lines: [(String, String)] = []
}

/// A coding key for array elements and counts.
private struct WireKey: CodingKey {
  var stringValue: String
  var intValue: Int?
  init(stringValue: String) { self.stringValue = stringValue }
  init(intValue: Int) {
    stringValue = String(intValue)
    self.intValue = intValue
  }
}

private func joined(_ path: [any CodingKey]) -> String {
  path.map(\.stringValue).joined(separator: ".")
}

private struct WireEncoder: Encoder {
  let storage: WireStorage
  let path: [any CodingKey]
  var codingPath: [any CodingKey] { path }
  var userInfo: [CodingUserInfoKey: Any] { [:] }

  func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
    KeyedEncodingContainer(Keyed<Key>(storage: storage, path: path))
  }

  /// Marks an object at `path`, so that an empty one (an enum case without values) is there.
  fileprivate static func markObject(at path: [any CodingKey], in storage: WireStorage) {
    if !path.isEmpty { storage.lines.append((joined(path), "{")) }
  }

  func unkeyedContainer() -> any UnkeyedEncodingContainer { Unkeyed(storage: storage, path: path) }

  func singleValueContainer() -> any SingleValueEncodingContainer { Single(storage: storage, path: path) }

  fileprivate static func write(_ scalar: String, at path: [any CodingKey], in storage: WireStorage) {
    storage.lines.append((joined(path), scalar))
  }

  /// Writes a scalar's text, or encodes a composite value below `path`.
  fileprivate static func encode<Value: Encodable>(
    _ value: Value, at path: [any CodingKey], in storage: WireStorage
  ) throws {
    switch value {
    case let value as String: write(value, at: path, in: storage)
    case let value as Bool: write(value ? "1" : "0", at: path, in: storage)
    case let value as Double: write(String(value.bitPattern), at: path, in: storage)
    case let value as Float: write(String(Double(value).bitPattern), at: path, in: storage)
    case let value as any BinaryInteger: write("\(value)", at: path, in: storage)
    default: try value.encode(to: WireEncoder(storage: storage, path: path))
    }
  }

  struct Keyed<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let storage: WireStorage
    let path: [any CodingKey]
    var codingPath: [any CodingKey] { path }

    init(storage: WireStorage, path: [any CodingKey]) {
      self.storage = storage
      self.path = path
      WireEncoder.markObject(at: path, in: storage)
    }

    mutating func encodeNil(forKey key: Key) throws {}
    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
      try WireEncoder.encode(value, at: path + [key], in: storage)
    }
    mutating func nestedContainer<NestedKey: CodingKey>(
      keyedBy keyType: NestedKey.Type, forKey key: Key
    ) -> KeyedEncodingContainer<NestedKey> {
      KeyedEncodingContainer(Keyed<NestedKey>(storage: storage, path: path + [key]))
    }
    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
      Unkeyed(storage: storage, path: path + [key])
    }
    mutating func superEncoder() -> any Encoder {
      WireEncoder(storage: storage, path: path + [WireKey(stringValue: "super")])
    }
    mutating func superEncoder(forKey key: Key) -> any Encoder {
      WireEncoder(storage: storage, path: path + [key])
    }
  }

  /// Elements under their index; the count under `#`, written when the container is made and
  /// rewritten as elements are added.
  final class Unkeyed: UnkeyedEncodingContainer {
    let storage: WireStorage
    let path: [any CodingKey]
    private let countLine: Int
    private(set) var count = 0
    var codingPath: [any CodingKey] { path }

    init(storage: WireStorage, path: [any CodingKey]) {
      self.storage = storage
      self.path = path
      countLine = storage.lines.count
      storage.lines.append((joined(path + [WireKey(stringValue: "#")]), "0"))
    }

    private func nextPath() -> [any CodingKey] {
      defer {
        count += 1
        storage.lines[countLine].1 = String(count)
      }
      return path + [WireKey(intValue: count)]
    }

    func encodeNil() throws { _ = nextPath() }
    func encode<T: Encodable>(_ value: T) throws {
      try WireEncoder.encode(value, at: nextPath(), in: storage)
    }
    func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<
      NestedKey
    > {
      KeyedEncodingContainer(Keyed<NestedKey>(storage: storage, path: nextPath()))
    }
    func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
      Unkeyed(storage: storage, path: nextPath())
    }
    func superEncoder() -> any Encoder { WireEncoder(storage: storage, path: nextPath()) }
  }

  struct Single: SingleValueEncodingContainer {
    let storage: WireStorage
    let path: [any CodingKey]
    var codingPath: [any CodingKey] { path }

    mutating func encodeNil() throws {}
    mutating func encode<T: Encodable>(_ value: T) throws {
      try WireEncoder.encode(value, at: path, in: storage)
    }
  }
}

private struct WireDecoder: Decoder {
  let values: [String: String]
  let path: [any CodingKey]
  var codingPath: [any CodingKey] { path }
  var userInfo: [CodingUserInfoKey: Any] { [:] }

  func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
    KeyedDecodingContainer(Keyed<Key>(values: values, path: path))
  }

  func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
    guard let count = values[joined(path + [WireKey(stringValue: "#")])].flatMap({ Int($0) }) else {
      throw DecodingError.valueNotFound(
        [Any].self, DecodingError.Context(codingPath: path, debugDescription: "no element count"))
    }
    return Unkeyed(values: values, path: path, count: count)
  }

  func singleValueContainer() throws -> any SingleValueDecodingContainer {
    Single(values: values, path: path)
  }

  /// Whether anything was written at or below `path`.
  static func contains(_ values: [String: String], _ path: [any CodingKey]) -> Bool {
    let name = joined(path)
    if values[name] != nil { return true }
    let prefix = name.isEmpty ? "" : name + "."
    return values.keys.contains { $0.hasPrefix(prefix) }
  }

  fileprivate static func decode<Value: Decodable>(
    _ type: Value.Type, at path: [any CodingKey], in values: [String: String]
  ) throws -> Value {
    func scalar() throws -> String {
      guard let text = values[joined(path)] else {
        throw DecodingError.valueNotFound(
          type, DecodingError.Context(codingPath: path, debugDescription: "no value"))
      }
      return text
    }
    func invalid() -> DecodingError {
      DecodingError.dataCorrupted(DecodingError.Context(codingPath: path, debugDescription: "not a \(type)"))
    }
    let scalarValue: Any
    switch type {
    case is String.Type: scalarValue = try scalar()
    case is Bool.Type: scalarValue = try scalar() == "1"
    case is Double.Type:
      guard let bits = UInt64(try scalar()) else { throw invalid() }
      scalarValue = Double(bitPattern: bits)
    case is Float.Type:
      guard let bits = UInt64(try scalar()) else { throw invalid() }
      scalarValue = Float(Double(bitPattern: bits))
    case let integer as any FixedWidthInteger.Type:
      guard let value = integer.init(try scalar(), radix: 10) else { throw invalid() }
      scalarValue = value
    default: return try Value(from: WireDecoder(values: values, path: path))
    }
    guard let value = scalarValue as? Value else { throw invalid() }
    return value
  }

  struct Keyed<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let values: [String: String]
    let path: [any CodingKey]
    var codingPath: [any CodingKey] { path }
    var allKeys: [Key] {
      let prefix = path.isEmpty ? "" : joined(path) + "."
      var names = Set<String>()
      for name in values.keys where name.hasPrefix(prefix) {
        let rest = name.dropFirst(prefix.count)
        names.insert(String(rest.prefix { $0 != "." }))
      }
      return names.compactMap { Key(stringValue: $0) }
    }

    func contains(_ key: Key) -> Bool { WireDecoder.contains(values, path + [key]) }
    func decodeNil(forKey key: Key) throws -> Bool { !contains(key) }
    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
      try WireDecoder.decode(type, at: path + [key], in: values)
    }
    func nestedContainer<NestedKey: CodingKey>(
      keyedBy type: NestedKey.Type, forKey key: Key
    ) throws -> KeyedDecodingContainer<NestedKey> {
      KeyedDecodingContainer(Keyed<NestedKey>(values: values, path: path + [key]))
    }
    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
      try WireDecoder(values: values, path: path + [key]).unkeyedContainer()
    }
    func superDecoder() throws -> any Decoder {
      WireDecoder(values: values, path: path + [WireKey(stringValue: "super")])
    }
    func superDecoder(forKey key: Key) throws -> any Decoder {
      WireDecoder(values: values, path: path + [key])
    }
  }

  struct Unkeyed: UnkeyedDecodingContainer {
    let values: [String: String]
    let path: [any CodingKey]
    let total: Int
    var currentIndex = 0
    var codingPath: [any CodingKey] { path }
    var count: Int? { total }
    var isAtEnd: Bool { currentIndex >= total }

    init(values: [String: String], path: [any CodingKey], count: Int) {
      self.values = values
      self.path = path
      total = count
    }

    private mutating func nextPath() throws -> [any CodingKey] {
      guard !isAtEnd else {
        throw DecodingError.valueNotFound(
          Any.self, DecodingError.Context(codingPath: path, debugDescription: "past the last element"))
      }
      defer { currentIndex += 1 }
      return path + [WireKey(intValue: currentIndex)]
    }

    mutating func decodeNil() throws -> Bool {
      guard !isAtEnd else { return false }
      if WireDecoder.contains(values, path + [WireKey(intValue: currentIndex)]) { return false }
      currentIndex += 1
      return true
    }
    mutating func decode<T: Decodable>(_ type: T.Type) throws -> T {
      try WireDecoder.decode(type, at: try nextPath(), in: values)
    }
    mutating func nestedContainer<NestedKey: CodingKey>(
      keyedBy type: NestedKey.Type
    ) throws -> KeyedDecodingContainer<NestedKey> {
      KeyedDecodingContainer(Keyed<NestedKey>(values: values, path: try nextPath()))
    }
    mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
      try WireDecoder(values: values, path: try nextPath()).unkeyedContainer()
    }
    mutating func superDecoder() throws -> any Decoder { WireDecoder(values: values, path: try nextPath()) }
  }

  struct Single: SingleValueDecodingContainer {
    let values: [String: String]
    let path: [any CodingKey]
    var codingPath: [any CodingKey] { path }

    func decodeNil() -> Bool { !WireDecoder.contains(values, path) }
    func decode<T: Decodable>(_ type: T.Type) throws -> T {
      try WireDecoder.decode(type, at: path, in: values)
    }
  }
}
