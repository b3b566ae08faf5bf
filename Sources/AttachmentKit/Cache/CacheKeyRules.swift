/// Query parameters left out of a URL's cache key (never out of its request), so that URLs
/// that differ only in a signature share one cache entry: the presigned URLs of S3, CloudFront,
/// Google Cloud Storage and Azure, whose signature, date and expiry change on every send.
///
/// A rule is an exact parameter name (`X-Amz-Signature`), a prefix pattern ending in `*`
/// (`X-Amz-*`), or a preset (`preset:s3`, `preset:cloudfront`, `preset:gcs`, `preset:azure`:
/// their names are in ``presets``). Names are compared as written in the URL (case-sensitive,
/// not percent-decoded). The parameters kept stay in their order; a query left empty is dropped
/// with its `?`.
///
/// Only a parameter that never selects content may be ignored: two URLs whose keys meet are
/// one entry. A signature, a credential, a date or an expiry qualifies; S3's `versionId`, an
/// image width, or `response-content-type` do not. A signature *authorizes*, so a hit on an
/// entry another URL fetched is confirmed with the origin under the caller's URL first (a
/// conditional request; ``confirmsHits``), and a presigned URL past its own expiry is refused
/// without a request. Off by default (``none``).
///
/// ```swift
/// var configuration = PipelineConfiguration()
/// configuration.cache.keyRules = try CacheKeyRules(["preset:s3", "utm_*"])
/// ```
public struct CacheKeyRules: Sendable, Hashable {
  /// One rule.
  public enum Pattern: Sendable, Hashable {
    /// A parameter with exactly this name.
    case name(String)
    /// Every parameter whose name starts with this text.
    case prefix(String)
  }

  /// The rules, presets expanded, in the order given.
  public let patterns: [Pattern]
  /// The name of the key space a key is filed in, appended to every key as `#name` (a fragment,
  /// which a URL's own key never keeps): an ``AttachmentProfile``'s derivatives of a URL are
  /// filed under keys of their own beside the original's, so that a caller of another profile
  /// never finds them. `nil` (the default): the URL's own key space.
  public var variant: String? = nil
  /// Whether a hit on an entry fetched with another URL (in the parameters left out) is
  /// confirmed with the origin under the caller's URL before it answers (`true`, the
  /// default): a signature authorizes, so one caller's presigned URL must not open what another
  /// caller's fetched. The rule `confirm:off-objects-are-public` turns it off, for an operator
  /// who knows every object behind these URLs may be served to anyone.
  public var confirmsHits = true

  /// The rule that turns hit confirmation off (``confirmsHits``).
  public static let publicObjectsRule = "confirm:off-objects-are-public"

  /// No rule: the whole URL is the key. The default.
  public static let none = CacheKeyRules(patterns: [])

  /// The parameters each preset ignores. Each is a signature, a credential, a date or an
  /// expiry of that service's presigned (or SAS) URLs; none selects content.
  public static let presets: [String: [String]] = [
    // SigV4 query authentication, and SigV2's names.
    "s3": [
      "X-Amz-Algorithm", "X-Amz-Credential", "X-Amz-Date", "X-Amz-Expires", "X-Amz-SignedHeaders",
      "X-Amz-Signature", "X-Amz-Security-Token", "AWSAccessKeyId", "Signature", "Expires",
      "x-amz-security-token",
    ],
    // Signed URLs with a canned or a custom policy.
    "cloudfront": ["Expires", "Signature", "Key-Pair-Id", "Policy"],
    // V4 signing, and the older GoogleAccessId form.
    "gcs": [
      "X-Goog-Algorithm", "X-Goog-Credential", "X-Goog-Date", "X-Goog-Expires", "X-Goog-SignedHeaders",
      "X-Goog-Signature", "GoogleAccessId", "Expires", "Signature",
    ],
    // Shared access signatures (service and account SAS, user delegation).
    "azure": [
      "sv", "ss", "srt", "sp", "se", "st", "spr", "sig", "sip", "si", "sr", "skoid", "sktid", "skt", "ske",
      "sks", "skv", "sdd", "ses",
    ],
  ]

  /// Rules from their text: each an exact name, a `prefix*` pattern or `preset:NAME`; and
  /// ``publicObjectsRule`` (`confirm:off-objects-are-public`), which turns hit confirmation off.
  /// - Throws: `invalid_configuration` for an empty rule, a `*` anywhere but at the end, a lone
  ///   `*` (it would ignore every parameter, content-selecting ones too), a name holding `&`,
  ///   `=`, `#` or a space, or an unknown preset.
  public init(_ rules: [String]) throws(AttachmentError) {
    var patterns: [Pattern] = []
    var confirms = true
    for rule in rules {
      if rule == Self.publicObjectsRule {
        confirms = false
        continue
      }
      if rule.hasPrefix("preset:") {
        let name = String(rule.dropFirst("preset:".count))
        guard let names = Self.presets[name] else {
          throw AttachmentError(
            .invalidConfiguration,
            "Unknown cache-key preset '\(rule)' (known: "
              + Self.presets.keys.sorted().map { "preset:" + $0 }.joined(separator: ", ") + ").")
        }
        patterns += names.map(Pattern.name)
        continue
      }
      var name = Substring(rule)
      let isPrefix = name.hasSuffix("*")
      if isPrefix { name = name.dropLast() }
      guard !name.isEmpty, !name.contains(where: { "*&=# ?".contains($0) || $0.isNewline }) else {
        throw AttachmentError(
          .invalidConfiguration,
          "'\(rule)' is not a cache-key rule: a parameter name, 'prefix*' or 'preset:NAME' "
            + "(\(Self.presets.keys.sorted().map { "preset:" + $0 }.joined(separator: ", "))).")
      }
      patterns.append(isPrefix ? .prefix(String(name)) : .name(String(name)))
    }
    var seen = Set<Pattern>()
    self.init(patterns: patterns.filter { seen.insert($0).inserted })
    confirmsHits = confirms
  }

  private init(patterns: [Pattern]) { self.patterns = patterns }

  /// Whether there is no parameter rule (a ``variant`` is not a rule about parameters).
  public var isEmpty: Bool { patterns.isEmpty }

  /// These rules filing keys in the key space `variant` (see ``variant``).
  func inVariant(_ variant: String?) -> CacheKeyRules {
    var rules = self
    rules.variant = variant
    return rules
  }

  /// Whether the parameter named `name` (as written) is left out of the key.
  func ignores(_ name: Substring) -> Bool {
    patterns.contains {
      switch $0 {
      case .name(let exact): name.utf8.elementsEqual(exact.utf8)
      case .prefix(let prefix): name.utf8.starts(with: prefix.utf8)
      }
    }
  }

  /// `pathAndQuery` (a URL's path and query, fragment removed) with the ignored parameters
  /// removed, and whether any was.
  func filtered(_ pathAndQuery: Substring) -> (text: Substring, dropped: Bool) {
    guard !isEmpty, let mark = pathAndQuery.utf8.firstIndex(of: UInt8(ascii: "?")) else {
      return (pathAndQuery, false)
    }
    let query = pathAndQuery[pathAndQuery.utf8.index(after: mark)...]
    let parameters = query.split(separator: "&", omittingEmptySubsequences: false)
    let kept = parameters.filter { parameter in
      let name = parameter.utf8.firstIndex(of: UInt8(ascii: "=")).map { parameter[..<$0] } ?? parameter
      return !ignores(name)
    }
    guard kept.count != parameters.count else { return (pathAndQuery, false) }
    let path = pathAndQuery[..<mark]
    return (kept.isEmpty ? path : Substring(String(path) + "?" + kept.joined(separator: "&")), true)
  }
}
