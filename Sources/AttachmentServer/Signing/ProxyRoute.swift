/// The proxy's routes under `/v1/`, one row each. The router (``Route``), the signer
/// (``URLSigner``), `attachkit sign` and the access log's path (``LoggedPath``) all read this one
/// table, so a new route is one row in ``all``.
///
/// A row's ``protection`` decides its path forms (each has one spelling only):
/// - `signed`: `/v1/<name>/<signature>/<base64url(url)>`, or, expiring,
///   `/v1/<name>/<signature>/<expiry>/<base64url(url)>`;
/// - `sealed` (the origin hidden): `/v1/<name>/<base64url(nonce ‖ ciphertext ‖ tag)>`, or,
///   expiring, `/v1/<name>/<expiry>/<base64url(…)>`;
/// - `unsigned`: `/v1/<name>/<base64url(url)>`, served only with `--unsigned`.
///
/// `<expiry>` is a time in Unix seconds, in decimal with no leading zero (``SignatureExpiry``).
public struct ProxyRoute: Sendable, Hashable, CustomStringConvertible {
  /// What a route answers with.
  public enum Answer: Sendable, Hashable {
    /// The file itself.
    case file
    /// The file's JSON record.
    case info
  }

  /// How a route's URL is protected.
  public enum Protection: Sendable, Hashable {
    /// The URL in the clear, with an HMAC-SHA256 signature in the path.
    case signed
    /// The URL encrypted and authenticated with AES-256-GCM: the path hides the origin.
    case sealed
    /// The URL in the clear with no signature (a development server's `--unsigned`).
    case unsigned
  }

  /// The path segment after `/v1/` (`a`, `info`, …).
  public let name: String
  /// What the route answers with.
  public let answer: Answer
  /// How its URL is protected.
  public let protection: Protection
  /// The `route` label of its metrics and access-log lines.
  public let label: String
  /// Whether a path of this route without an expiry signs the URL alone, as the file route has
  /// since the first release; every other route signs its name first (see
  /// ``URLSigner/message(for:route:expiry:)``). Only ``attachment`` does.
  let signsURLAlone: Bool

  /// `/v1/a/…`: the file.
  public static let attachment = ProxyRoute(
    name: "a", answer: .file, protection: .signed, label: "attachment", signsURLAlone: true)
  /// `/v1/info/…`: the file's JSON record.
  public static let info = ProxyRoute(
    name: "info", answer: .info, protection: .signed, label: "info", signsURLAlone: false)
  /// `/v1/u/…`: the file, unsigned (only with `--unsigned`).
  public static let unsigned = ProxyRoute(
    name: "u", answer: .file, protection: .unsigned, label: "unsigned", signsURLAlone: false)
  /// `/v1/e/…`: the file, its origin hidden.
  public static let hidden = ProxyRoute(
    name: "e", answer: .file, protection: .sealed, label: "hidden", signsURLAlone: false)
  /// `/v1/ei/…`: the file's JSON record, its origin hidden.
  public static let hiddenInfo = ProxyRoute(
    name: "ei", answer: .info, protection: .sealed, label: "hidden_info", signsURLAlone: false)

  /// Every route, the one table.
  public static let all: [ProxyRoute] = [attachment, info, unsigned, hidden, hiddenInfo]

  /// The route named `name` (the segment after `/v1/`), or `nil`.
  public static func named(_ name: some Collection<UInt8>) -> ProxyRoute? {
    all.first { $0.name.utf8.elementsEqual(name) }
  }

  /// The route that answers `answer` with `protection`, or `nil` when the table has none.
  public static func serving(_ answer: Answer, protection: Protection) -> ProxyRoute? {
    all.first { $0.answer == answer && $0.protection == protection }
  }

  /// How many segments follow the route's name: the payload, the signature of a signed route,
  /// and the expiry when there is one.
  func segmentCount(expiring: Bool) -> Int {
    (protection == .signed ? 2 : 1) + (expiring ? 1 : 0)
  }

  /// Whether the route's paths may carry an expiry (an unsigned path has nothing to cover it).
  public var canExpire: Bool { protection != .unsigned }

  /// The forms of this route's paths, for messages: `/v1/a/<signature>[/<expiry>]/<base64url(url)>`.
  public var forms: String {
    switch protection {
    case .signed: "/v1/\(name)/<signature>[/<expiry>]/<base64url(url)>"
    case .sealed: "/v1/\(name)[/<expiry>]/<base64url(sealed url)>"
    case .unsigned: "/v1/\(name)/<base64url(url)>"
    }
  }

  /// The route's name, as in its paths.
  public var description: String { name }
}
