import ArgumentParsing
import AttachmentKit
import Glibc

/// Options several commands share, each declared once as the key it is read by.
enum CommonOptions {
  static let json = FlagKey(long: "json", help: "Print one JSON object per input per line.")
  static let quiet = FlagKey(long: "quiet", short: "q", help: "Print no table or summary, only errors.")
  static let cacheDirectory = OptionKey<String>.option(
    long: "cache-dir", valueName: "DIR",
    help:
      "The cache directory (default: $ATTACHKIT_CACHE_DIR, else $XDG_CACHE_HOME/attachkit, else ~/.cache/attachkit)."
  )
  static let maximumCacheBytes = OptionKey<Int64>.byteCount(
    long: "max-cache-bytes", valueName: "BYTES", bound: .positive,
    help:
      "The size the cache may grow to; least recently used entries are evicted past it (default: $ATTACHKIT_CACHE_MAX_BYTES, else 512MiB)."
  )
  static let durable = FlagKey(
    long: "durable",
    help: "fsync each new file, record and directory before answering, so a power loss cannot undo a publish."
  )
  static let rescue = FlagKey(
    long: "rescue",
    help:
      "Turn near-miss images into attachments with libvips: WebP, HEIC and AVIF converted to JPEG/PNG/GIF, images over the byte or pixel limit downscaled (sources up to 50 MB)."
  )
  static let deadline = OptionKey<Double>.number(
    long: "deadline", valueName: "SECONDS", bound: .positive,
    help: "Absolute deadline per request, in seconds (default 25, leaving headroom in the 30 s budget).")
  static let allowPrivateNetworks = FlagKey(
    long: "allow-private-networks",
    help: "Allow loopback, private and link-local addresses (also ATTACHKIT_ALLOW_PRIVATE_NETWORKS=1).")
  static let proxy = OptionKey<String>.option(
    long: "proxy", valueName: "URL",
    help:
      "Send every request through this proxy (http://, https://, socks5h://). Proxy variables in the environment are ignored."
  )
  static let proxyUnchecked = FlagKey(
    long: "proxy-unchecked",
    help:
      "Accept that, through --proxy, the private-network guard checks only IP-literal and localhost hosts, not where names resolve."
  )
  static let maximumImageBytes = OptionKey<Int64>.byteCount(
    long: "max-image-bytes", valueName: "BYTES", bound: .positive, help: "Largest image (default 10MB).")
  static let maximumAudioBytes = OptionKey<Int64>.byteCount(
    long: "max-audio-bytes", valueName: "BYTES", bound: .positive, help: "Largest audio file (default 5MB).")
  static let maximumVideoBytes = OptionKey<Int64>.byteCount(
    long: "max-video-bytes", valueName: "BYTES", bound: .positive, help: "Largest video (default 50MB).")
  static let maximumVideoSeconds = OptionKey<Double>.number(
    long: "max-video-seconds", valueName: "SECONDS", bound: .positive,
    help: "Longest video, in seconds (default 30).")

  /// Every option ``pipelineConfiguration(_:)`` reads: the one group that `fetch`, `prefetch`
  /// and `serve` declare, so a pipeline is configured the same way by each.
  static let pipeline: [any ArgumentKey] =
    [
      cacheDirectory, deadline, allowPrivateNetworks, maximumCacheBytes, durable, rescue, proxy,
      proxyUnchecked,
    ]
    + limits

  /// The validation limits ``limits(_:)`` reads.
  static let limits: [any ArgumentKey] = [
    maximumImageBytes, maximumAudioBytes, maximumVideoBytes, maximumVideoSeconds,
  ]

  /// Exit codes, shown in every command's help.
  static let exitCodes = HelpSection(
    title: "EXIT CODES",
    body: """
        0    every input was accepted
        1    at least one input was rejected or failed
        2    usage error (bad option, unreadable input file)
        3    the cache directory is unusable
        130  interrupted (Ctrl-C)
      """)

  /// Exit codes of the `cache` subcommands (they reject or fail no input).
  static let cacheExitCodes = HelpSection(
    title: "EXIT CODES",
    body: """
        0    done
        2    usage error (bad option)
        3    the cache directory is unusable
      """)

  /// The cache size limit from `--max-cache-bytes`, else `$ATTACHKIT_CACHE_MAX_BYTES`, else
  /// `nil` (the library's default, 512 MiB).
  static func maximumCacheBytes(_ arguments: ParsedArguments) throws(UsageError) -> Int64? {
    if let bytes = try arguments[maximumCacheBytes] { return bytes }
    return try environmentCacheBytes(arguments)
  }

  /// `$ATTACHKIT_CACHE_MAX_BYTES` as a byte count, or `nil` when unset or empty.
  static func environmentCacheBytes(_ arguments: ParsedArguments) throws(UsageError) -> Int64? {
    guard let text = getenv("ATTACHKIT_CACHE_MAX_BYTES").map({ String(cString: $0) }), !text.isEmpty else {
      return nil
    }
    guard let bytes = ByteCount.parse(text), bytes > 0 else {
      throw arguments.usageError(
        "ATTACHKIT_CACHE_MAX_BYTES expects a positive byte size such as 500, 10MB or 5MiB, got '\(Terminal.safe(text))'"
      )
    }
    return bytes
  }

  /// The validation limits from the options.
  static func limits(_ arguments: ParsedArguments) throws(UsageError) -> ValidationLimits {
    var limits = ValidationLimits()
    if let value = try arguments[maximumImageBytes] { limits.maximumImageBytes = value }
    if let value = try arguments[maximumAudioBytes] { limits.maximumAudioBytes = value }
    if let value = try arguments[maximumVideoBytes] { limits.maximumVideoBytes = value }
    if let value = try arguments[maximumVideoSeconds] { limits.maximumVideoSeconds = value }
    return limits
  }

  /// The per-request deadline from `--deadline` (default 25 s).
  static func deadline(_ arguments: ParsedArguments) throws(UsageError) -> Duration {
    let seconds = try arguments[deadline] ?? 25
    return .milliseconds(Int64((seconds * 1000).rounded()))
  }

  /// Opens the pipeline the options describe, or prints why the cache is unusable and
  /// returns `nil` (the caller exits 3).
  static func openPipeline(_ arguments: ParsedArguments) throws(UsageError) -> AttachmentPipeline? {
    let configuration = try pipelineConfiguration(arguments)
    do {
      return try AttachmentPipeline(configuration: configuration)
    } catch {
      Terminal.error("attachkit: \(Terminal.safe(error.message))\n")
      return nil
    }
  }

  /// The pipeline configuration from the options.
  static func pipelineConfiguration(_ arguments: ParsedArguments) throws(UsageError) -> PipelineConfiguration
  {
    var configuration = PipelineConfiguration(
      cacheDirectory: arguments[cacheDirectory] ?? CacheConfiguration.defaultDirectory())
    configuration.limits = try limits(arguments)
    if let bytes = try maximumCacheBytes(arguments) {
      configuration.cache.maximumBytes = bytes
    }
    // A command-line run is short: its automatic sweep runs inline, or the process would
    // exit before a background one finished.
    configuration.cache.sweepsInBackground = false
    configuration.cache.durable = arguments[durable]
    if arguments[rescue] { configuration.rescue = RescueConfiguration() }
    configuration.downloader.allowPrivateNetworks =
      arguments[allowPrivateNetworks] || Environment.flag("ATTACHKIT_ALLOW_PRIVATE_NETWORKS")
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
}

/// Exit statuses of the command line.
enum ExitCode: Int32 {
  case success = 0
  case someFailed = 1
  case usage = 2
  case cacheUnusable = 3
  case interrupted = 130
}

/// A command that can run, in two phases so that nothing is done twice and no input is judged
/// before every option is.
protocol RunnableCommand: ParsableCommand {
  /// Parses every option and opens what the command needs (one pipeline for the whole run),
  /// synchronously, before any task or thread starts. Answers at once when it can (a cache
  /// hit, a maintenance call); otherwise returns the work still to do.
  /// - Throws: ``UsageError`` for any bad option or input, before anything was answered.
  static func start(_ arguments: ParsedArguments) throws(UsageError) -> CommandStart
}

/// What ``RunnableCommand/start(_:)`` leaves: an answer, or work to run on a task.
enum CommandStart {
  /// Answered already, with this exit status.
  case finished(ExitCode)
  /// Work to run to completion; it returns the exit status.
  case run(@Sendable () async -> ExitCode)
}

/// Environment switches.
enum Environment {
  /// Whether a variable is set to `1`, `true` or `yes`.
  static func flag(_ name: String) -> Bool {
    guard let value = getenv(name) else { return false }
    return ["1", "true", "yes"].contains(String(cString: value).lowercased())
  }
}
