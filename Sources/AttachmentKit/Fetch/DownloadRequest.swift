/// One thing to download: a URL, where its body goes, and what the request asks of the server.
public struct DownloadRequest: Sendable {
  /// The absolute `http` or `https` URL to fetch, as text. Anything else fails with
  /// `invalid_url` or `unsupported_scheme` before any connection is made.
  public var url: String

  /// The directory in which the body's temporary file is created (it must exist and be on the
  /// file system where the caller will keep the file, so that a rename can publish it).
  /// Default: `/tmp`.
  public var directory: String

  /// An entity tag to revalidate with (`If-None-Match`); a `304` then completes the download
  /// with ``Download/isNotModified`` set and no file.
  public var ifNoneMatch: String?

  /// An HTTP date to revalidate with (`If-Modified-Since`), used like ``ifNoneMatch``.
  public var ifModifiedSince: String?

  /// A lower body limit for this request, in bytes; the configuration's limit applies when
  /// `nil` or larger.
  public var maximumBodyBytes: Int64?

  /// Looks at the response head and the first body bytes as they arrive and may stop the
  /// transfer (the validator uses this to refuse a wrong type early). Called on the engine's
  /// thread, one call at a time.
  public var inspector: (any ResponseInspector)?

  /// Counts the body bytes as they arrive, for a caller that stops waiting before the download
  /// ends (its cancellation or deadline error then carries them). Default: `nil`.
  public var receivedBytes: ReceivedBytes?

  /// A file the caller already opened for the body, instead of a new temporary file in
  /// ``directory`` (the cache hands one in so it can publish an anonymous `O_TMPFILE`).
  /// The transfer writes at `descriptor`'s offset, takes the descriptor over and closes it
  /// when done (pass a `dup` to keep using the file), and reports `path` as
  /// ``Download/file``. The caller disposes of the file on every outcome it is told of; only a
  /// body that completes after its caller was already answered (its deadline passed, or it was
  /// cancelled) is unlinked by the engine, as nobody is left to take it.
  /// Default: `nil`.
  public var bodyFile: (path: String, descriptor: Int32)?

  /// The URL as ``AttachmentURL`` checked it, when the request was made from one: the
  /// downloader then does not check ``url`` again (unless it was changed since).
  let checkedURL: AttachmentURL?

  /// Whether a body of at most ``BodyDigest/inlineBytes`` is left unhashed
  /// (``Download/digest`` is ``Download/Digest/deferred``) because the caller hashes it off the engine thread: the
  /// pipeline's check reads the body anyway and hashes it as it goes (``ReadAlongDigest``),
  /// so the one thread that serves every transfer spends nothing on it. Larger bodies are
  /// still hashed during the transfer, on another core. Default: `false`.
  var leavesSmallBodyDigestToCaller = false

  /// Makes a request for `url` whose body is written into `directory`.
  public init(url: String, directory: String = "/tmp", inspector: (any ResponseInspector)? = nil) {
    self.url = url
    self.directory = directory
    self.inspector = inspector
    checkedURL = nil
  }

  /// Makes a request for a URL checked already, whose body is written into `directory`.
  public init(url: AttachmentURL, directory: String = "/tmp", inspector: (any ResponseInspector)? = nil) {
    self.url = url.text
    self.directory = directory
    self.inspector = inspector
    checkedURL = url
  }

  /// Whether the request carries a validator, which makes a `304` answer a success.
  var isConditional: Bool { ifNoneMatch != nil || ifModifiedSince != nil }
}
