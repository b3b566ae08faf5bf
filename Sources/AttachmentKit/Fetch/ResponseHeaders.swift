/// The headers of one HTTP response, in the order received, with case-insensitive lookup and
/// typed accessors for the ones caching and validation use.
public struct ResponseHeaders: Sendable, Equatable {
  /// Every header line as (name, value), names as sent, values trimmed.
  public private(set) var fields: [(name: String, value: String)] = []

  /// Makes an empty header set.
  public init() {}

  /// Makes a header set from (name, value) pairs.
  public init(_ fields: [(name: String, value: String)]) { self.fields = fields }

  /// The value of the first header with that name (any case), or `nil`.
  public subscript(name: String) -> String? {
    let wanted = name.lowercased()
    return fields.first { $0.name.lowercased() == wanted }?.value
  }

  /// The `Content-Type` header, or `nil`.
  public var contentType: String? { self["Content-Type"] }
  /// The `Content-Length` header as a number, or `nil` when absent or not a number.
  public var contentLength: Int64? { self["Content-Length"].flatMap { Int64($0) } }
  /// The `ETag` header, or `nil`.
  public var etag: String? { self["ETag"] }
  /// The `Last-Modified` header (an HTTP date, as text), or `nil`.
  public var lastModified: String? { self["Last-Modified"] }
  /// The `Cache-Control` header, or `nil`.
  public var cacheControl: String? { self["Cache-Control"] }
  /// The `Expires` header (an HTTP date, as text), or `nil`.
  public var expires: String? { self["Expires"] }
  /// The `Date` header (an HTTP date, as text), or `nil`.
  public var date: String? { self["Date"] }
  /// The `Content-Encoding` header, or `nil`.
  public var contentEncoding: String? { self["Content-Encoding"] }
  /// The `Location` header, or `nil`.
  public var location: String? { self["Location"] }

  mutating func append(name: String, value: String) { fields.append((name, value)) }

  /// Two header sets are equal when they hold the same lines in the same order.
  public static func == (lhs: ResponseHeaders, rhs: ResponseHeaders) -> Bool {
    lhs.fields.count == rhs.fields.count
      && zip(lhs.fields, rhs.fields).allSatisfy { $0.name == $1.name && $0.value == $1.value }
  }
}
