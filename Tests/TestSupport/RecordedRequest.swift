/// One HTTP request as the server received it, kept so tests can inspect what was sent.
public struct RecordedRequest: Sendable {
  /// The request method, e.g. `"GET"` or `"HEAD"`.
  public let method: String
  /// The request target exactly as sent, e.g. `"/files/a.jpg?x=1"`.
  public let target: String
  /// The path without the query string, e.g. `"/files/a.jpg"`.
  public let path: String
  /// The query string without the `?`, or nil when there was none.
  public let query: String?
  /// The protocol version, e.g. `"HTTP/1.1"`.
  public let version: String
  /// Every header line in the order received, names as sent.
  public let headers: [(name: String, value: String)]
  /// The request body (empty for GET and HEAD).
  public let body: [UInt8]
  /// Identifies the TCP connection that carried the request (unique per server).
  public let connectionID: Int
  /// Zero-based position of this request among those on its connection.
  public let indexOnConnection: Int

  /// Creates a recorded request.
  public init(
    method: String, target: String, path: String, query: String?, version: String,
    headers: [(name: String, value: String)], body: [UInt8] = [], connectionID: Int = 0,
    indexOnConnection: Int = 0
  ) {
    self.method = method
    self.target = target
    self.path = path
    self.query = query
    self.version = version
    self.headers = headers
    self.body = body
    self.connectionID = connectionID
    self.indexOnConnection = indexOnConnection
  }

  /// The value of the first header called `name` (case-insensitive), or nil.
  public func header(_ name: String) -> String? {
    let wanted = name.lowercased()
    return headers.first { $0.name.lowercased() == wanted }?.value
  }

  /// Every value of the headers called `name` (case-insensitive), in order.
  public func headerValues(_ name: String) -> [String] {
    let wanted = name.lowercased()
    return headers.filter { $0.name.lowercased() == wanted }.map(\.value)
  }

  /// Whether the request carries a header called `name` (case-insensitive).
  public func hasHeader(_ name: String) -> Bool {
    header(name) != nil
  }

  /// Whether the client asked to close the connection after this request
  /// (`Connection: close`, or HTTP/1.0 without `Connection: keep-alive`).
  public var wantsClose: Bool {
    let tokens = headerValues("Connection")
      .flatMap { $0.split(separator: ",") }
      .map { $0.trimmingASCIIWhitespace().lowercased() }
    if tokens.contains("close") { return true }
    if version == "HTTP/1.0" { return !tokens.contains("keep-alive") }
    return false
  }
}

extension StringProtocol {
  /// The text without leading and trailing spaces and tabs.
  func trimmingASCIIWhitespace() -> String {
    let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" || $0 == "\r" || $0 == "\n" }
    guard let first = firstIndex(where: { !isSpace($0) }),
      let last = lastIndex(where: { !isSpace($0) })
    else { return "" }
    return String(self[first...last])
  }
}
