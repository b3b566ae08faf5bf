import AttachmentKit

/// The headers serve adds to every answer besides its own: content-safety headers by default
/// (a proxied file is never sniffed as something else and runs no script if opened in a
/// browser), and what the operator adds (`--header 'Name: value'`).
public struct ResponseHeaderFields: Sendable, Equatable {
  /// One header field.
  public struct Field: Sendable, Equatable {
    /// The field name, as sent.
    public let name: String
    /// The field value.
    public let value: String
  }

  /// The fields, in the order they are sent.
  public private(set) var fields: [Field]

  /// `X-Content-Type-Options: nosniff` and `Content-Security-Policy: default-src 'none';
  /// sandbox` (what go-camo sends): the defaults.
  public static let contentSafety = ResponseHeaderFields(fields: [
    Field(name: "X-Content-Type-Options", value: "nosniff"),
    Field(name: "Content-Security-Policy", value: "default-src 'none'; sandbox"),
  ])

  /// Names serve sets itself per answer: an operator's field may not replace them.
  static let reserved: Set<String> = [
    "accept-ranges", "age", "cache-control", "connection", "content-length", "content-range", "content-type",
    "date", "etag", "last-modified", "retry-after", "transfer-encoding", "vary", "x-attachment-source",
    "x-request-id",
  ]

  private init(fields: [Field]) { self.fields = fields }

  /// The content-safety defaults, then `lines` (each `Name: value`): a line naming a default
  /// field replaces it (an operator may widen the policy), and a later line of one name
  /// replaces an earlier one.
  /// - Throws: `invalid_configuration` for a line without `:`, a name that is not an HTTP
  ///   token, a value with a control character, or a name serve sets itself (``reserved``).
  public init(addingLines lines: [String]) throws(AttachmentError) {
    var fields = Self.contentSafety.fields
    for line in lines {
      guard let colon = line.firstIndex(of: ":") else {
        throw AttachmentError(.invalidConfiguration, "A response header needs 'Name: value', got '\(line)'.")
      }
      let name = String(line[..<colon])
      let value = String(line[line.index(after: colon)...].drop(while: { $0 == " " || $0 == "\t" }))
      guard HeaderSyntax.isName(name) else {
        throw AttachmentError(.invalidConfiguration, "'\(name)' is not a header name.")
      }
      guard HeaderSyntax.isValue(value) else {
        throw AttachmentError(.invalidConfiguration, "The value of '\(name)' holds a control character.")
      }
      guard !Self.reserved.contains(name.lowercased()) else {
        throw AttachmentError(.invalidConfiguration, "serve sets '\(name)' itself; it cannot be configured.")
      }
      fields.removeAll { $0.name.lowercased() == name.lowercased() }
      fields.append(Field(name: name, value: value))
    }
    self.init(fields: fields)
  }
}
