/// An S3-compatible object store as the cache's second tier (``PipelineConfiguration/store``):
/// the local cache first, then the store, then the origin. Every instance of a fleet that names
/// the same bucket and prefix shares what the others fetched, validated and rescued.
///
/// Layout under ``prefix``: `content/<sha256>.<ext>` (the delivered bytes, written once with
/// `If-None-Match: *`) and `records/<sha256 of the cache key>` (the record: the URL key, its
/// validators and freshness, the validation facts, the rescue's actions and source type, in
/// the profile's key space), written only after its content exists. Every byte read from the
/// store is checked against its record's SHA-256 and size before it is used.
///
/// The store never makes a request wait past a bounded share of its deadline
/// (``readShare``, at most ``maximumReadSeconds``): a store that is down, slow or refusing is a
/// miss, and the request goes on to the origin. Writes run in the background after the answer
/// (``writeAttempts`` tries, then dropped), and never delay it.
public struct StoreConfiguration: Sendable, Equatable {
  /// The bucket's name (3 characters or more).
  public var bucket: String
  /// The key prefix every object of this cache goes under, without a leading or trailing `/`
  /// (empty: the bucket's root). Default: empty.
  public var prefix: String
  /// The endpoint's base URL, `http://` or `https://` with a host and an optional port, and no
  /// path. Default: `https://s3.<region>.amazonaws.com`.
  public var endpoint: String
  /// The region requests are signed for (AWS Signature Version 4). Default: `us-east-1`.
  public var region: String
  /// The access key id.
  public var accessKeyID: String
  /// The secret access key.
  public var secretAccessKey: String
  /// A session token of temporary credentials, sent as `x-amz-security-token`. Default: `nil`.
  public var sessionToken: String?
  /// Whether the bucket is addressed as a host name (`https://bucket.endpoint/key`, AWS's
  /// default) instead of a path (`https://endpoint/bucket/key`, which every S3-compatible store
  /// takes). Default: `true` for AWS's own endpoints, `false` for any other.
  public var virtualHosted: Bool
  /// The share of the time a request has left that looking in the store may take (record and
  /// content together); past it the store is a miss. Default: `0.25`.
  public var readShare: Double = Self.defaultReadShare
  /// The most time looking in the store may take, whatever the deadline, in seconds.
  /// Default: `3`.
  public var maximumReadSeconds: Double = Self.defaultMaximumReadSeconds
  /// How many times a background write is tried before it is dropped. Default: `3`.
  public var writeAttempts = 3
  /// The background writes that may wait at once; more are dropped (and counted). Default: `64`.
  public var maximumPendingWrites = 64
  /// The time each background write request may take, in seconds. Default: `30`.
  public var writeTimeoutSeconds: Double = 30
  /// The longest a lease lasts, in seconds: a miss's lease expires at its own deadline, at most
  /// this long from when it was taken. Default: `30`.
  public var leaseSeconds: Double = 30
  /// Whether a miss the store could not answer takes the key's lease first, so that one
  /// instance of the fleet downloads, checks and rescues it while the others wait for its
  /// record. Default: `true`.
  public var usesLeases = true
  /// Whether a failed read or write prints a line on standard error (`attachkit: store: …`).
  /// Default: `true`.
  public var logsFailures = true

  /// A store at `location`, an `s3://BUCKET/PREFIX` URL.
  /// - Throws: `invalid_configuration` naming what is wrong with `location` or `endpoint`.
  public init(
    location: String, endpoint: String? = nil, region: String = "us-east-1", accessKeyID: String,
    secretAccessKey: String, sessionToken: String? = nil
  ) throws(AttachmentError) {
    let (bucket, prefix) = try Self.parse(location: location)
    self.bucket = bucket
    self.prefix = prefix
    self.region = region
    let base = endpoint ?? "https://s3.\(region).amazonaws.com"
    self.endpoint = try Self.checkedEndpoint(base)
    virtualHosted = endpoint == nil || Self.isAWS(self.endpoint)
    self.accessKeyID = accessKeyID
    self.secretAccessKey = secretAccessKey
    self.sessionToken = sessionToken
  }

  /// `s3://BUCKET/PREFIX` split into the bucket and the prefix (without slashes at its ends).
  static func parse(location: String) throws(AttachmentError) -> (String, String) {
    guard location.hasPrefix("s3://") else {
      throw AttachmentError(
        .invalidConfiguration,
        "The store location must be an s3://BUCKET/PREFIX URL, got '\(shown(location))'.")
    }
    let rest = location.dropFirst(5)
    let bucket = String(rest.prefix { $0 != "/" })
    let prefix = rest.dropFirst(bucket.count).split(separator: "/").joined(separator: "/")
    let allowed = bucket.utf8.allSatisfy {
      ($0 >= 0x61 && $0 <= 0x7A) || ($0 >= 0x30 && $0 <= 0x39) || $0 == 0x2D || $0 == 0x2E
    }
    guard bucket.utf8.count >= 3, bucket.utf8.count <= 63, allowed else {
      throw AttachmentError(
        .invalidConfiguration,
        "The store's bucket name '\(shown(bucket))' is not a bucket name (3 to 63 lower-case letters, digits, '-' or '.')."
      )
    }
    guard prefix.utf8.allSatisfy({ $0 > 0x20 && $0 != 0x7F && $0 != 0x3F && $0 != 0x23 }) else {
      throw AttachmentError(
        .invalidConfiguration,
        "The store's prefix '\(shown(prefix))' holds a space, '?', '#' or a control character.")
    }
    return (bucket, prefix)
  }

  /// `text` as an endpoint: `http(s)://host[:port]`, a trailing `/` dropped.
  static func checkedEndpoint(_ text: String) throws(AttachmentError) -> String {
    var base = text
    while base.hasSuffix("/") { base.removeLast() }
    let scheme = base.hasPrefix("https://") ? 8 : base.hasPrefix("http://") ? 7 : 0
    let authority = base.dropFirst(scheme)
    guard scheme > 0, !authority.isEmpty, !authority.contains("/"), !authority.contains("@"),
      authority.utf8.allSatisfy({ $0 > 0x20 && $0 != 0x7F && $0 != 0x3F && $0 != 0x23 })
    else {
      throw AttachmentError(
        .invalidConfiguration,
        "The store endpoint '\(shown(text))' is not an http:// or https:// URL of a host (and port) without a path."
      )
    }
    return base
  }

  private static func isAWS(_ endpoint: String) -> Bool { endpoint.hasSuffix(".amazonaws.com") }

  private static func shown(_ text: String) -> String { Redaction.escapeControlCharacters(text) }

  /// ``readShare``'s default, also a ``PipelineConfiguration/sharedTier``'s: a quarter.
  static let defaultReadShare = 0.25
  /// ``maximumReadSeconds``' default, also a ``PipelineConfiguration/sharedTier``'s: 3 s.
  static let defaultMaximumReadSeconds = 3.0

  /// The URL of the object `key` (a key under the bucket, prefix included).
  func url(ofObject key: String) -> String {
    guard virtualHosted else { return "\(endpoint)/\(bucket)/\(key)" }
    let scheme = endpoint.hasPrefix("https://") ? "https://" : "http://"
    return "\(scheme)\(bucket).\(endpoint.dropFirst(scheme.count))/\(key)"
  }

  /// The key of `name` under the prefix.
  func key(_ name: String) -> String { prefix.isEmpty ? name : "\(prefix)/\(name)" }

  /// `s3://BUCKET/PREFIX`, for messages.
  public var location: String { prefix.isEmpty ? "s3://\(bucket)" : "s3://\(bucket)/\(prefix)" }
}
