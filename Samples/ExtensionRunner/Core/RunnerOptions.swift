import ArgumentParsing
import AttachmentKit
import Foundation
import PipelineOptions

/// `extension-runner`: the command declaration, its help page included.
public enum RunnerCommand: ParsableCommand {
  /// The name, overview and help sections.
  public static let configuration = CommandConfiguration(
    name: "extension-runner",
    abstract: "Runs a Notification Service Extension's whole job on an APNs payload.",
    discussion: """
      Without aps.mutable-content 1 the content is delivered at once, unchanged but for its \
      loc-key alert, localized as iOS shows it. Otherwise the \
      critical steps come first: loc-key alerts are localized with --strings, and the \
      encrypted_data field is decrypted; then the attachments (at most --max-attachments) are \
      fetched in parallel through AttachmentKit, at most --max-concurrent-fetches at once; at \
      budget − margin the best attempt so far is delivered and the rest cancelled. A payload's \
      fallback-urls are tried in order when its first attachment fails; when no attachment is made, \
      the --fallback-image and the payload's fallback-body are delivered. The delivered \
      content is printed as JSON on stdout, the trace on stderr.
      """,
    examples: [
      "extension-runner Samples/payloads/image.json --base-url http://127.0.0.1:PORT",
      "extension-runner --key-file Samples/payloads/sample.key Samples/payloads/encrypted.json",
      "extension-runner --budget 3 --trace --base-url http://127.0.0.1:PORT Samples/payloads/hanging.json",
      "extension-runner --strings Samples/payloads/Localizable.xcstrings --locale fr "
        + "--base-url http://127.0.0.1:PORT Samples/payloads/localized.json",
    ],
    sections: [
      HelpSection(
        title: "EXIT CODES",
        body: """
            0    content was delivered (also when steps failed: it falls back to the best attempt)
            2    unusable arguments (bad option, unreadable payload or key file, payload not a JSON object, --fallback-image not an acceptable image)
          """),
      HelpSection(
        title: "ENVIRONMENT",
        body: """
            ATTACHKIT_CACHE_DIR   the default cache directory
            ATTACHKIT_ALLOW_PRIVATE_NETWORKS=1   as --allow-private-networks
            ATTACHKIT_STORE       as --store; the store's credentials, region and endpoint from AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN, AWS_PROFILE, AWS_REGION, AWS_ENDPOINT_URL_S3 (as the AWS command line reads them)
            TMPDIR                where delivered attachment files are copied by default
          """),
    ])

  /// `--budget`: the extension's whole time, in seconds.
  public static let budget = OptionKey<Double>.number(
    long: "budget", valueName: "SECONDS", bound: .positive,
    help: "The extension's whole time, counted from start (default 30).")
  /// `--expire-margin`: how long before the budget's end time runs out, in seconds.
  public static let expireMargin = OptionKey<Double>.number(
    long: "expire-margin", valueName: "SECONDS", bound: .nonNegative,
    help: "serviceExtensionTimeWillExpire comes this long before the budget ends (default 1).")
  /// `--key-file`: the AES-256 key for `encrypted_data`.
  public static let keyFile = OptionKey<String>.option(
    long: "key-file", valueName: "FILE",
    help: "The AES-256 key for encrypted_data: 64 hex digits, base64, or 32 raw bytes.")
  /// `--base-url`: what replaces `{BASE}` in the payload.
  public static let baseURL = OptionKey<String>.option(
    long: "base-url", valueName: "URL",
    help: "Replaces {BASE} in the payload's strings (sample payloads: the sample server's URL).")
  /// `--attachment-keys`: the key paths that hold attachment URLs.
  public static let attachmentKeys = OptionKey<String>.option(
    long: "attachment-keys", valueName: "KEYS",
    help: "Comma-separated key paths holding attachment URLs, in order (default: "
      + AttachmentLocator.defaultKeys.joined(separator: ",") + ").")
  /// `--attachments-dir`: where delivered files are copied.
  public static let attachmentsDirectory = OptionKey<String>.option(
    long: "attachments-dir", valueName: "DIR",
    help:
      "Keep the delivered files' copies in DIR, one directory per run. Without it they go to a directory of this run under $TMPDIR/extension-runner-UID, removed when the runner exits (as iOS takes them)."
  )
  /// `--strings`: the app's strings file or string catalog.
  public static let strings = OptionKey<String>.option(
    long: "strings", valueName: "FILE",
    help: "The app's Localizable.strings (UTF-8 or UTF-16) or Localizable.xcstrings, for loc-key alerts.")
  /// `--locale`: the language read from a string catalog.
  public static let locale = OptionKey<String>.option(
    long: "locale", valueName: "LANG",
    help: "The language read from a string catalog (default en; then its sourceLanguage, then the key).")
  /// `--max-concurrent-fetches`: how many attachments are fetched at once.
  public static let maximumConcurrentFetches = OptionKey<Int>.integer(
    long: "max-concurrent-fetches", valueName: "N", bound: .positive,
    help: "How many attachments are fetched at once (default 4).")
  /// `--max-attachments`: how many attachments one payload may have.
  public static let maximumAttachments = OptionKey<Int>.integer(
    long: "max-attachments", valueName: "N", bound: .positive,
    help: "How many attachments one payload may have (default 10); the rest are skipped.")
  /// `--no-rescue`: refuses near-miss images, video and audio instead of rescuing them.
  public static let noRescue = FlagKey(
    long: "no-rescue",
    help:
      "Refuse near-miss images, video and audio instead of rescuing them (rescue is on by default: WebP/HEIC/AVIF converted, oversized images downscaled, long clips trimmed, foreign containers re-wrapped, other codecs transcoded when the estimate fits the budget left)."
  )
  /// `--no-poster`: no JPEG still of a video that cannot be made playable in the budget left.
  public static let noPoster = FlagKey(
    long: "no-poster",
    help:
      "Refuse a video that cannot be made playable in the budget left rather than attach a JPEG poster of its first frame that is not nearly black."
  )
  /// `--fallback-image`: the bundled image delivered when no attachment could be made.
  public static let fallbackImage = OptionKey<String>.option(
    long: "fallback-image", valueName: "FILE",
    help:
      "A bundled image delivered as the attachment when the payload asked for attachments and none could be made (nor any of its fallback-urls); validated at start, never delivered after time will expire."
  )
  /// `--trace`: puts the trace in the JSON output too.
  public static let trace = FlagKey(
    long: "trace", help: "Also put the trace in the JSON output, under \"trace\".")
  /// `--poster-time-seconds SECONDS`: the poster-time search's budget; 0 turns it off.
  public static let posterTimeSeconds = OptionKey<Double>.number(
    long: "poster-time-seconds", valueName: "SECONDS", bound: .nonNegative,
    help:
      "The most time a video's proposed thumbnail time (its first frame that is not nearly black within 5 s) is looked for on a miss, never past time-will-expire; 0 turns it off (default 1.5; off with --no-rescue)."
  )
  /// The payload file.
  public static let payload = PositionalKey<String>.positional(
    name: "payload", valueName: "PAYLOAD.json", help: "The APNs payload.")

  /// The options, the flags and the payload, in the order help lists them. The cache directory,
  /// the private-network guard and the object store are the pipeline options the runner shares
  /// with `attachkit` (``PipelineOptions``); the rest are the runner's own.
  public static let arguments: [any ArgumentKey] = [
    budget, expireMargin, PipelineOptions.cacheDirectory, keyFile, baseURL, attachmentKeys,
    attachmentsDirectory, strings, locale, maximumConcurrentFetches, maximumAttachments,
    PipelineOptions.allowPrivateNetworks, PipelineOptions.store, PipelineOptions.storeEndpoint, noRescue,
    noPoster,
    posterTimeSeconds, fallbackImage, trace, payload,
  ]
}

/// The settings of one run, read from the command line.
public struct RunnerOptions: Sendable, Equatable {
  /// The whole budget.
  public var budget: Duration = .seconds(30)
  /// How long before its end `serviceExtensionTimeWillExpire` is called.
  public var expireMargin: Duration = .seconds(1)
  /// The attachment cache.
  public var cacheDirectory: String
  /// The key file, when given.
  public var keyFile: String?
  /// The replacement of `{BASE}`, when given.
  public var baseURL: String?
  /// The attachment key paths.
  public var attachmentKeys: [String] = AttachmentLocator.defaultKeys
  /// Where delivered files are copied.
  public var attachmentsDirectory: String
  /// Whether the delivered files' copies stay after the run (`--attachments-dir` given); by
  /// default they are staged in a directory of the run's own, removed when it ends.
  public var keepsAttachments = false
  /// Whether the JSON output carries the trace.
  public var includeTrace = false
  /// The localized strings for `loc-key` alerts (`--strings`, `--locale`), when given.
  public var localization: LocalizationSource?
  /// How many attachments are fetched at once.
  public var maximumConcurrentFetches = 4
  /// How many attachments one payload may have.
  public var maximumAttachments = 10
  /// Whether fetches may reach loopback and private addresses (the sample server, tests).
  public var allowPrivateNetworks = false
  /// The fleet's object store behind the cache (`--store`, `$ATTACHKIT_STORE`), when given: a
  /// local miss looks there before the origin, within its bounded share of the budget, and what
  /// the origin gave is written there before the run ends (within the budget). Not checked at
  /// start, since every run is one notification and the check would spend its budget: a store
  /// that fails costs each fetch its share and shows in the trace (`store`).
  public var store: StoreConfiguration?
  /// Whether near-miss images are rescued with libvips (converted, downscaled) and near-miss
  /// video and audio with FFmpeg (trimmed and re-wrapped always, transcoded when the estimate
  /// fits the budget left). Default: on, since showing something is an extension's job;
  /// `--no-rescue` turns it off.
  public var rescue = true
  /// With ``rescue``: whether a video that cannot be made playable in the budget left becomes a
  /// JPEG poster (``AttachmentKit/PosterRescuer``). Default: on; `--no-poster` turns it off.
  public var poster = true
  /// The bundled fallback image (`--fallback-image`), when given: validated by
  /// ``RunnerProgram`` before the payload is run.
  public var fallbackImagePath: String?
  /// With ``rescue``: the most time, in seconds, a video's poster time is looked for on a miss
  /// (``AttachmentKit/PosterTimeConfiguration/maximumSeconds``); 0 turns it off. Default: 1.5.
  public var posterTimeSeconds = 1.5
  /// The payload file.
  public var payloadPath: String

  /// Options with the defaults and `payloadPath`.
  public init(payloadPath: String) {
    self.payloadPath = payloadPath
    cacheDirectory = CacheConfiguration.defaultDirectory()
    attachmentsDirectory = AttachmentStaging.defaultRoot()
  }

  /// What the command line asks for.
  public enum Parsed: Sendable, Equatable {
    /// Run with these options.
    case run(RunnerOptions)
    /// Print this help text and exit 0.
    case help(String)
  }

  /// The longest budget accepted, in seconds (a day; iOS gives about 30 s).
  static let longestBudget = 86_400.0
  /// The most fetches at once and attachments a payload accepted by the options.
  static let largestCap = 1000

  /// Reads the words after the program name; `environment` supplies
  /// `ATTACHKIT_ALLOW_PRIVATE_NETWORKS`.
  /// - Throws: ``UsageError`` for anything unusable, with a message naming the option.
  public static func parse(
    _ words: [String], environment: [String: String] = ProcessInfo.processInfo.environment
  ) throws(UsageError) -> Parsed {
    let arguments: ParsedArguments
    switch try CommandRouter(root: RunnerCommand.self).parse(words) {
    case .help(let text), .version(let text): return .help(text)
    case .run(_, let parsed): arguments = parsed
    }
    guard let payload = arguments[RunnerCommand.payload] else {
      throw arguments.usageError("missing PAYLOAD.json")
    }
    var options = RunnerOptions(payloadPath: payload)
    try options.readTimes(arguments)
    options.cacheDirectory = PipelineOptions.cacheDirectory(from: arguments)
    if let directory = arguments[RunnerCommand.attachmentsDirectory] {
      options.attachmentsDirectory = directory
      options.keepsAttachments = true
    }
    options.keyFile = arguments[RunnerCommand.keyFile]
    options.fallbackImagePath = arguments[RunnerCommand.fallbackImage]
    try options.readPayloadShape(arguments)
    try options.readLocalization(arguments)
    for (key, keyPath) in [
      (RunnerCommand.maximumConcurrentFetches, \RunnerOptions.maximumConcurrentFetches),
      (RunnerCommand.maximumAttachments, \RunnerOptions.maximumAttachments),
    ] {
      guard let value = try arguments[key] else { continue }
      guard value <= largestCap else {
        throw arguments.usageError("--\(key.spec.name) expects at most \(largestCap), got \(value)")
      }
      options[keyPath: keyPath] = value
    }
    options.includeTrace = arguments[RunnerCommand.trace]
    options.rescue = !arguments[RunnerCommand.noRescue]
    options.poster = !arguments[RunnerCommand.noPoster]
    if let seconds = try arguments[RunnerCommand.posterTimeSeconds] {
      guard seconds <= longestBudget else {
        throw arguments.usageError(
          "--poster-time-seconds expects at most \(Int(longestBudget)), got \(seconds)")
      }
      options.posterTimeSeconds = seconds
    }
    options.allowPrivateNetworks = PipelineOptions.allowsPrivateNetworks(
      from: arguments, environment: EnvironmentVariables(environment))
    options.store = try PipelineOptions.storeConfiguration(
      from: arguments, environment: EnvironmentVariables(environment))
    return .run(options)
  }

  /// `--budget` and `--expire-margin`: the margin must be shorter than the budget, and the
  /// budget at most ``longestBudget``.
  private mutating func readTimes(_ arguments: ParsedArguments) throws(UsageError) {
    let budget = try arguments[RunnerCommand.budget] ?? 30
    let margin = try arguments[RunnerCommand.expireMargin] ?? 1
    guard budget <= Self.longestBudget else {
      throw arguments.usageError("--budget expects at most \(Int(Self.longestBudget)) seconds, got \(budget)")
    }
    guard margin < budget else {
      throw arguments.usageError("--expire-margin (\(margin) s) must be less than --budget (\(budget) s)")
    }
    self.budget = .seconds(budget)
    expireMargin = .seconds(margin)
  }

  /// `--base-url` (an http(s) URL, trailing slashes dropped) and `--attachment-keys` (a
  /// comma-separated list without empty entries).
  private mutating func readPayloadShape(_ arguments: ParsedArguments) throws(UsageError) {
    if let base = arguments[RunnerCommand.baseURL] {
      var trimmed = base
      while trimmed.hasSuffix("/") { trimmed.removeLast() }
      let lower = trimmed.lowercased()
      guard lower.hasPrefix("http://") || lower.hasPrefix("https://"),
        !trimmed.contains(where: { $0.isWhitespace || $0 == "\"" || $0 == "\\" })
      else {
        throw arguments.usageError(
          "--base-url expects an http(s) URL such as http://127.0.0.1:8080, got '\(base)'")
      }
      baseURL = trimmed
    }
    if let keys = arguments[RunnerCommand.attachmentKeys] {
      let list = keys.split(separator: ",", omittingEmptySubsequences: false).map {
        String($0).filter { !$0.isWhitespace }
      }
      guard !list.isEmpty, !list.contains(where: \.isEmpty) else {
        throw arguments.usageError("--attachment-keys expects comma-separated key paths, got '\(keys)'")
      }
      attachmentKeys = list
    }
  }

  /// `--strings` and `--locale` (a language tag, which needs `--strings`).
  private mutating func readLocalization(_ arguments: ParsedArguments) throws(UsageError) {
    if let path = arguments[RunnerCommand.strings] {
      localization = LocalizationSource(path: path)
    }
    if let locale = arguments[RunnerCommand.locale] {
      guard !locale.isEmpty,
        locale.unicodeScalars.allSatisfy({
          $0.isASCII && ($0.properties.isAlphabetic || "-_0123456789".unicodeScalars.contains($0))
        })
      else {
        throw arguments.usageError("--locale expects a language such as en, fr or pt-BR, got '\(locale)'")
      }
      guard localization != nil else { throw arguments.usageError("--locale needs --strings") }
      localization?.locale = locale
    }
  }
}
