import ArgumentParsing
import AttachmentKit

/// The command-line options that configure an ``AttachmentKit/AttachmentPipeline``, declared
/// once for every face that opens one: `attachkit fetch`, `prefetch` and `serve` declare the
/// whole group (``all``), `attachkit validate` and `rescue` the ``limits``, and the extension
/// runner the options it shares (``cacheDirectory``, ``allowPrivateNetworks``).
///
/// Each option is a key (see ``ArgumentParsing/ArgumentKey``): list it in a command's
/// arguments and read it back through the functions below, which turn the parsed values into
/// the library's settings. Reading a key the command does not declare stops the program.
public enum PipelineOptions {
  /// `--cache-dir DIR`: the cache directory.
  public static let cacheDirectory = OptionKey<String>.option(
    long: "cache-dir", valueName: "DIR",
    help:
      "The cache directory (default: $ATTACHKIT_CACHE_DIR, else $XDG_CACHE_HOME/attachkit, else ~/.cache/attachkit)."
  )
  /// `--max-cache-bytes BYTES`: the size the cache may grow to.
  public static let maximumCacheBytes = OptionKey<Int64>.byteCount(
    long: "max-cache-bytes", valueName: "BYTES", bound: .positive,
    help:
      "The size the cache may grow to; least recently used entries are evicted past it (default: $ATTACHKIT_MAX_CACHE_BYTES, else 512MiB)."
  )
  /// `--durable`: fsync before answering.
  public static let durable = FlagKey(
    long: "durable",
    help: "fsync each new file, record and directory before answering, so a power loss cannot undo a publish."
  )
  /// `--rescue`: turn near-miss images, video and audio into attachments.
  public static let rescue = FlagKey(
    long: "rescue",
    help:
      "Turn near-miss media into attachments: WebP, HEIC and AVIF converted and oversized images downscaled (libvips, sources up to 50 MB); long clips trimmed, foreign containers re-wrapped, VP9/AV1/FLAC/Opus/DTS transcoded to H.264 and AAC (FFmpeg, sources up to 200 MB). An accepted video gets a proposed poster time too (posterTimeSeconds: its first frame that is not nearly black within 5 s, found in a worker within 1.5 s)."
  )
  /// `--rescue-workers N`: the rescue worker processes of each library one process runs at once.
  public static let rescueWorkers = OptionKey<Int>.integer(
    long: "rescue-workers", bound: .positive,
    help:
      "With --rescue: the most rescue worker processes per library (libvips, FFmpeg) at once; more rescues wait for a free one until their deadline (default 2; about one per core)."
  )
  /// `--worker-jobs N`: the jobs one rescue worker runs before it exits.
  public static let workerJobs = OptionKey<Int>.integer(
    long: "worker-jobs", bound: .positive,
    help:
      "With --rescue: the jobs one rescue worker runs before it exits (default 1). More reuses a worker a decoder's attacker may own for the next caller's job, and drops Landlock: a risk to accept knowingly."
  )
  /// `--rescue-memory BYTES`: each rescue worker's address-space ceiling.
  public static let rescueMemory = OptionKey<Int64>.byteCount(
    long: "rescue-memory", valueName: "BYTES", bound: .positive,
    help:
      "With --rescue: each rescue worker's memory ceiling (RLIMIT_AS); a rescue that needs more fails alone (default 1GiB)."
  )
  /// `--poster-time-seconds DURATION`: the poster-time search's wall budget; 0 turns it off.
  public static let posterTimeSeconds = OptionKey<Double>.duration(
    long: "poster-time-seconds", valueName: "DURATION", bound: .nonNegative,
    help:
      "With --rescue: the most time an accepted video's poster time (posterTimeSeconds, its first frame that is not nearly black within 5 s) is looked for on a miss, worker start included, never past the deadline; 0 turns it off (default 1.5)."
  )
  /// `--no-poster`: no still of a video the media rescue cannot make playable in time.
  public static let noPoster = FlagKey(
    long: "no-poster",
    help:
      "With --rescue: when a video cannot be made playable in the time left, refuse it rather than deliver a JPEG poster of its first frame that is not nearly black (actions [\"poster\"])."
  )
  /// `--profile NAME`: the target each file is made for (``AttachmentKit/AttachmentProfile``).
  /// Not in ``all``: `fetch`, `prefetch` and `rescue` declare it (serve takes it from the route).
  public static let profile = OptionKey<String>.oneOf(
    long: "profile", valueName: "NAME", choices: ["ios", "android", "ios-compact"],
    help:
      "The target each file is made for: ios (the default: Apple's limits), android (an FCM notification image: JPEG or PNG of at most 1 MB and 1024 pixels on the long side; video and audio refused) or ios-compact (accepted images over 2048 pixels on the long side downscaled, GIFs left animated). Each profile's files are cached apart."
  )
  /// `--deadline DURATION`: the absolute deadline of each request, in seconds (`25`, `500ms`, `2s`,
  /// `1m`).
  public static let deadline = OptionKey<Double>.duration(
    long: "deadline", valueName: "DURATION", bound: .positive,
    help:
      "Absolute deadline per request: seconds, or with a unit (500ms, 2s, 1m) (default 25, leaving headroom in the 30 s budget)."
  )
  /// `--retries N`: how many times a transient network failure is retried within the deadline.
  public static let retries = OptionKey<Int>.integer(
    long: "retries", bound: .nonNegative,
    help:
      "Retry a connection failure or reset, or a 502/503/504, this many times within the deadline, resuming a cut body with Range when the origin allows; 0 turns retrying off (default: $ATTACHKIT_RETRIES, else 1)."
  )
  /// `--allow-private-networks`: let fetches reach loopback, private and link-local addresses.
  public static let allowPrivateNetworks = FlagKey(
    long: "allow-private-networks",
    help: "Allow loopback, private and link-local addresses (also ATTACHKIT_ALLOW_PRIVATE_NETWORKS=1).")
  /// `--proxy URL`: send every request through this proxy.
  public static let proxy = OptionKey<String>.option(
    long: "proxy", valueName: "URL",
    help:
      "Send every request through this proxy (http://, https://, socks5h://). Proxy variables in the environment are ignored."
  )
  /// `--proxy-unchecked`: accept the weaker private-network guard a proxy leaves.
  public static let proxyUnchecked = FlagKey(
    long: "proxy-unchecked",
    help:
      "Accept that, through --proxy, the private-network guard checks only IP-literal and localhost hosts, not where names resolve."
  )
  /// `--cache-key-ignore PARAM`: query parameters left out of the cache key (repeatable).
  public static let cacheKeyIgnore = OptionKey<String>.option(
    long: "cache-key-ignore", valueName: "PARAM",
    help:
      "Leave this query parameter out of the cache key (never out of the request), so presigned URLs of one object share an entry: a name, 'prefix*', or preset:s3, preset:cloudfront, preset:gcs, preset:azure; repeatable, or comma-separated (also $ATTACHKIT_CACHE_KEY_IGNORE). Only for parameters that never select content. A signature authorizes: a hit on an entry another URL fetched is confirmed with the origin under this caller's URL first (a conditional request), and an expired presigned URL is refused without one; the rule confirm:off-objects-are-public skips the confirmation, for objects anyone may have."
  )
  /// `--allow-origin PREFIX`: the hosts and URL prefixes fetches may go to (repeatable).
  public static let allowOrigin = OptionKey<String>.option(
    long: "allow-origin", valueName: "PREFIX",
    help:
      "Fetch only from this host (media.example.com), these subdomains (*.example.com) or under this URL prefix (https://media.example.com/push/), for the URL and every redirect; else origin_not_allowed. Repeatable, or comma-separated (also $ATTACHKIT_ALLOW_ORIGIN). Default: any origin."
  )
  /// `--origin-headers FILE`: request headers for the URLs under a prefix (credentials).
  public static let originHeaders = OptionKey<String>.option(
    long: "origin-headers", valueName: "FILE",
    help:
      "Request headers for private origins, one 'URL-PREFIX Name: value' a line (# comments): sent only to URLs under the prefix, never after a redirect elsewhere, never logged; the file must be mode 600 (also $ATTACHKIT_ORIGIN_HEADERS)."
  )
  /// `--max-image-bytes BYTES`: the largest image accepted.
  public static let maximumImageBytes = OptionKey<Int64>.byteCount(
    long: "max-image-bytes", valueName: "BYTES", bound: .positive, help: "Largest image (default 10MB).")
  /// `--max-audio-bytes BYTES`: the largest audio file accepted.
  public static let maximumAudioBytes = OptionKey<Int64>.byteCount(
    long: "max-audio-bytes", valueName: "BYTES", bound: .positive, help: "Largest audio file (default 5MB).")
  /// `--max-video-bytes BYTES`: the largest video accepted.
  public static let maximumVideoBytes = OptionKey<Int64>.byteCount(
    long: "max-video-bytes", valueName: "BYTES", bound: .positive, help: "Largest video (default 50MB).")
  /// `--max-video-seconds DURATION`: the longest video accepted, in seconds (`30`, `1.5m`).
  public static let maximumVideoSeconds = OptionKey<Double>.duration(
    long: "max-video-seconds", valueName: "DURATION", bound: .positive,
    help: "Longest video: seconds, or with a unit (90s, 1.5m) (default 30).")

  /// Every option ``configuration(from:environment:)`` reads, in the order help lists them:
  /// the one group that `fetch`, `prefetch` and `serve` declare, so a pipeline is configured
  /// the same way by each.
  public static let all: [any ArgumentKey] =
    [
      cacheDirectory, deadline, retries, allowPrivateNetworks, maximumCacheBytes, durable, rescue,
      rescueWorkers, workerJobs, rescueMemory, noPoster, posterTimeSeconds, proxy, proxyUnchecked,
      cacheKeyIgnore,
      allowOrigin,
      originHeaders, store, storeEndpoint,
    ]
    + limits

  /// The validation limits ``limits(from:)`` reads.
  public static let limits: [any ArgumentKey] = [
    maximumImageBytes, maximumAudioBytes, maximumVideoBytes, maximumVideoSeconds,
  ]

  /// The pipeline configuration the whole group (``all``) describes: the cache directory, its
  /// size limit and durability, the limits, rescue, the private-network guard and the proxy;
  /// everything else is the library's default.
  /// - Throws: ``ArgumentParsing/UsageError`` for a malformed value, a bad
  ///   `ATTACHKIT_MAX_CACHE_BYTES`, `--proxy` without `--proxy-unchecked` (unless private
  ///   networks are allowed), `--proxy-unchecked` without `--proxy`, and a bad
  ///   `ATTACHKIT_RETRIES`.
  public static func configuration(
    from arguments: ParsedArguments, environment: EnvironmentVariables = .process
  ) throws(UsageError) -> PipelineConfiguration {
    var configuration = PipelineConfiguration(cacheDirectory: cacheDirectory(from: arguments))
    configuration.limits = try limits(from: arguments)
    if let bytes = try maximumCacheBytes(from: arguments, environment: environment) {
      configuration.cache.maximumBytes = bytes
    }
    configuration.cache.durable = arguments[durable]
    configuration.cache.keyRules = try cacheKeyRules(from: arguments, environment: environment)
    configuration.rescuers = try rescuers(from: arguments)
    configuration.posterTime = try posterTime(from: arguments)
    configuration.downloader.allowPrivateNetworks = allowsPrivateNetworks(
      from: arguments, environment: environment)
    configuration.downloader.allowedOrigins = try allowedOrigins(from: arguments, environment: environment)
    if let path = arguments[originHeaders]
      ?? environment["ATTACHKIT_ORIGIN_HEADERS"].flatMap({ $0.isEmpty ? nil : $0 })
    {
      do {
        configuration.downloader.originHeaders = try OriginHeaders(file: path)
      } catch {
        throw arguments.usageError(error.message)
      }
    }
    if let count = try retries(from: arguments, environment: environment) {
      configuration.downloader.retries = count
    }
    configuration.store = try storeConfiguration(from: arguments, environment: environment)
    if let proxy = arguments[Self.proxy] {
      configuration.downloader.proxy = DownloaderConfiguration.Proxy(
        url: proxy, acceptsUncheckedDestinations: arguments[proxyUnchecked])
      if !configuration.downloader.allowPrivateNetworks && !arguments[proxyUnchecked] {
        throw arguments.usageError(
          "--proxy hides where requests really go from the private-network guard: add --proxy-unchecked to accept that"
        )
      }
    } else if arguments[proxyUnchecked] {
      throw arguments.usageError("--proxy-unchecked needs --proxy")
    }
    return configuration
  }

  /// The rescuers `--rescue` turns on (none without it), their workers sized by
  /// `--rescue-workers` and `--rescue-memory`.
  /// - Throws: ``ArgumentParsing/UsageError`` for a malformed value, or either option without
  ///   `--rescue`.
  public static func rescuers(from arguments: ParsedArguments) throws(UsageError) -> [any Rescuer] {
    var workers = RescueWorkerConfiguration()
    let pool = try arguments[rescueWorkers]
    let ceiling = try arguments[rescueMemory]
    let jobs = try arguments[workerJobs]
    guard arguments[rescue] else {
      if jobs != nil {
        throw arguments.usageError("--worker-jobs sizes the workers of --rescue: add --rescue")
      }
      if pool != nil || ceiling != nil {
        throw arguments.usageError(
          "--rescue-workers and --rescue-memory size the workers of --rescue: add --rescue")
      }
      if arguments[noPoster] {
        throw arguments.usageError("--no-poster turns off a part of --rescue: add --rescue")
      }
      return []
    }
    if let pool { workers.poolSize = pool }
    if let ceiling { workers.memoryCeilingBytes = ceiling }
    if let jobs { workers.jobsPerWorker = jobs }
    var image = RescueConfiguration()
    image.workers = workers
    var media = MediaRescueConfiguration()
    media.workers = workers
    return StandardRescuers.make(
      image: image, media: media, poster: arguments[noPoster] ? nil : PosterConfiguration())
  }

  /// The poster-time search (``AttachmentKit/PosterTimeConfiguration``) `--rescue` turns on
  /// with the rescuers, in workers sized as theirs, within `--poster-time-seconds`; `nil`
  /// without `--rescue` or with `--poster-time-seconds 0` (no worker is started for an accepted
  /// video then).
  /// - Throws: ``ArgumentParsing/UsageError`` for a malformed `--poster-time-seconds`, or one
  ///   without `--rescue`.
  public static func posterTime(from arguments: ParsedArguments) throws(UsageError)
    -> PosterTimeConfiguration?
  {
    let seconds = try arguments[posterTimeSeconds]
    guard arguments[rescue] else {
      if seconds != nil {
        throw arguments.usageError("--poster-time-seconds bounds a part of --rescue: add --rescue")
      }
      return nil
    }
    if seconds == 0 { return nil }
    var configuration = PosterTimeConfiguration()
    if let seconds { configuration.maximumSeconds = seconds }
    if let pool = try? arguments[rescueWorkers] { configuration.search.source.workers.poolSize = pool }
    if let ceiling = try? arguments[rescueMemory] {
      configuration.search.source.workers.memoryCeilingBytes = ceiling
    }
    return configuration
  }

  /// The cache-key rules of `--cache-key-ignore` (each value may list several, comma-separated),
  /// else of `$ATTACHKIT_CACHE_KEY_IGNORE` (comma- or space-separated), else none.
  /// - Throws: ``ArgumentParsing/UsageError`` for a rule that is no name, `prefix*` or known
  ///   preset.
  public static func cacheKeyRules(
    from arguments: ParsedArguments, environment: EnvironmentVariables = .process
  ) throws(UsageError) -> CacheKeyRules {
    let rules = list(cacheKeyIgnore, orVariable: "ATTACHKIT_CACHE_KEY_IGNORE", arguments, environment)
    do {
      return try CacheKeyRules(rules)
    } catch {
      throw arguments.usageError(error.message)
    }
  }

  /// The allowlist of `--allow-origin` (each value may list several, comma-separated), else of
  /// `$ATTACHKIT_ALLOW_ORIGIN` (comma- or space-separated), else any origin.
  /// - Throws: ``ArgumentParsing/UsageError`` for an entry that is no host, `*.` wildcard or
  ///   http(s) URL prefix.
  public static func allowedOrigins(
    from arguments: ParsedArguments, environment: EnvironmentVariables = .process
  ) throws(UsageError) -> OriginAllowlist {
    let entries = list(allowOrigin, orVariable: "ATTACHKIT_ALLOW_ORIGIN", arguments, environment)
    do {
      return try OriginAllowlist(entries)
    } catch {
      throw arguments.usageError(error.message)
    }
  }

  /// The items of a repeatable list option, each value split at commas and spaces, else of its
  /// environment variable (one text, split the same way); empty when neither is given.
  private static func list(
    _ key: OptionKey<String>, orVariable variable: String, _ arguments: ParsedArguments,
    _ environment: EnvironmentVariables
  ) -> [String] {
    var texts = arguments.values(of: key)
    if texts.isEmpty, let value = environment[variable] { texts = [value] }
    return texts.flatMap { $0.split(whereSeparator: { $0 == "," || $0 == " " }).map(String.init) }
  }

  /// `--cache-dir`, else the library's default directory
  /// (``AttachmentKit/CacheConfiguration/defaultDirectory()``).
  public static func cacheDirectory(from arguments: ParsedArguments) -> String {
    arguments[cacheDirectory] ?? CacheConfiguration.defaultDirectory()
  }

  /// Whether `--allow-private-networks` is given or `ATTACHKIT_ALLOW_PRIVATE_NETWORKS` is `1`,
  /// `true` or `yes` (in any case).
  public static func allowsPrivateNetworks(
    from arguments: ParsedArguments, environment: EnvironmentVariables = .process
  ) -> Bool {
    arguments[allowPrivateNetworks] || environment.isOn("ATTACHKIT_ALLOW_PRIVATE_NETWORKS")
  }

  /// The cache size limit in bytes from `--max-cache-bytes`, else `$ATTACHKIT_MAX_CACHE_BYTES`
  /// (or its older name, `$ATTACHKIT_CACHE_MAX_BYTES`), else `nil` (the library's default, 512 MiB).
  /// - Throws: ``ArgumentParsing/UsageError`` when either is no positive byte size.
  public static func maximumCacheBytes(
    from arguments: ParsedArguments, environment: EnvironmentVariables = .process
  ) throws(UsageError) -> Int64? {
    if let bytes = try arguments[maximumCacheBytes] { return bytes }
    return try environmentCacheBytes(for: arguments, environment: environment)
  }

  /// How many retries `--retries` asks for, else `$ATTACHKIT_RETRIES`, else `nil` (the
  /// library's default, 1).
  /// - Throws: ``ArgumentParsing/UsageError`` when either is no whole number ≥ 0.
  public static func retries(
    from arguments: ParsedArguments, environment: EnvironmentVariables = .process
  ) throws(UsageError) -> Int? {
    if let count = try arguments[retries] { return count }
    guard let text = environment["ATTACHKIT_RETRIES"], !text.isEmpty else { return nil }
    guard let count = Int(text), count >= 0 else {
      let shown = Redaction.escapeControlCharacters(text)
      throw arguments.usageError("ATTACHKIT_RETRIES expects a whole number of 0 or more, got '\(shown)'")
    }
    return count
  }

  /// The cache size limit's variable, and the older name still read when it is unset.
  public static let cacheBytesVariables = ["ATTACHKIT_MAX_CACHE_BYTES", "ATTACHKIT_CACHE_MAX_BYTES"]

  /// `$ATTACHKIT_MAX_CACHE_BYTES` (else its older name, `$ATTACHKIT_CACHE_MAX_BYTES`) as a number
  /// of bytes, or `nil` when both are unset or empty.
  /// - Throws: ``ArgumentParsing/UsageError`` about the command `arguments` belong to, naming the
  ///   variable, when the one read holds anything but a positive byte size.
  public static func environmentCacheBytes(
    for arguments: ParsedArguments, environment: EnvironmentVariables = .process
  ) throws(UsageError) -> Int64? {
    guard
      let (variable, text) = cacheBytesVariables.lazy.compactMap({ name in
        environment[name].flatMap { $0.isEmpty ? nil : (name, $0) }
      }).first
    else { return nil }
    guard let bytes = ByteCount.parse(text), bytes > 0 else {
      let shown = Redaction.escapeControlCharacters(text)
      throw arguments.usageError(
        "\(variable) expects a positive byte size such as 500, 10MB or 5MiB, got '\(shown)'")
    }
    return bytes
  }

  /// The validation limits from ``limits``; the library's defaults for those not given.
  /// - Throws: ``ArgumentParsing/UsageError`` for a value that is no positive size or number.
  public static func limits(from arguments: ParsedArguments) throws(UsageError) -> ValidationLimits {
    var limits = ValidationLimits()
    if let value = try arguments[maximumImageBytes] { limits.maximumImageBytes = value }
    if let value = try arguments[maximumAudioBytes] { limits.maximumAudioBytes = value }
    if let value = try arguments[maximumVideoBytes] { limits.maximumVideoBytes = value }
    if let value = try arguments[maximumVideoSeconds] { limits.maximumVideoSeconds = value }
    return limits
  }

  /// The profile `--profile` names, else ``AttachmentKit/AttachmentProfile/ios``.
  /// - Throws: ``ArgumentParsing/UsageError`` naming the profiles there are, for any other name.
  public static func profile(from arguments: ParsedArguments) throws(UsageError) -> AttachmentProfile {
    guard let name = arguments[profile] else { return .ios }
    do {
      return try AttachmentProfile(named: name)
    } catch {
      throw arguments.usageError(error.message)
    }
  }

  /// The per-request deadline from `--deadline` (default 25 s), to the millisecond.
  /// - Throws: ``ArgumentParsing/UsageError`` for a value that is no positive number.
  public static func deadline(from arguments: ParsedArguments) throws(UsageError) -> Duration {
    let seconds = try deadlineSeconds(from: arguments)
    return .milliseconds(Int64((seconds * 1000).rounded()))
  }

  /// `--deadline` in seconds (default 25), for settings kept in seconds (serve's).
  /// - Throws: ``ArgumentParsing/UsageError`` for a value that is no positive number.
  public static func deadlineSeconds(from arguments: ParsedArguments) throws(UsageError) -> Double {
    try arguments[deadline] ?? 25
  }
}
