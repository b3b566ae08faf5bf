import ArgumentParsing
import AttachmentKit
import AttachmentServer
import Glibc
import PipelineOptions

/// `attachkit serve`: the push-media proxy. Answers signed URLs with validated, cached files
/// until SIGTERM or SIGINT, then drains and exits 0; SIGHUP reloads the key file.
enum ServeCommand: RunnableCommand {
  static let configuration = CommandConfiguration(
    name: "serve",
    abstract: "Run the push-media proxy: signed URLs in, validated cached files out.",
    discussion: """
      Routes: GET|HEAD /v1/a/<sig>/<base64url(url)> (the file), GET /v1/info/<sig>/<base64url(url)> \
      (its JSON record), each also /v1/a/<sig>/<expiry>/<…> (410 signature_expired after it) and hidden as \
      /v1/e/[<expiry>/]<sealed url> and /v1/ei/… (AES-256-GCM), GET /healthz, GET /readyz (cache usable, keys loaded), GET /metrics (Prometheus). \
      Sign paths with 'attachkit sign'. \
      Writes one JSON line per request to standard error (client address, RFC 3339 time, bytes \
      really sent; the request id every answer carries in X-Request-Id). Under systemd \
      (Type=notify) it sends READY=1 once listening, RELOADING=1 around a SIGHUP reload and \
      STOPPING=1 when the drain begins. SIGTERM stops accepting, cancels fetches \
      no client waits for, finishes the requests in flight (at most --drain-timeout) and exits 0. \
      SIGHUP re-reads --key-file (a bad file keeps the old keys; the log says why). A port in \
      use is refused; --share-port opts into a hand-over (see its help).
      """,
    examples: [
      "attachkit serve --listen 127.0.0.1:8080 --key-file /etc/attachkit/keys",
      "attachkit serve --listen 0.0.0.0:8080 --key-file keys --max-connections 2000 --deadline 20",
    ],
    sections: [exitCodes], environmentPrefix: "ATTACHKIT_")

  static let exitCodes = HelpSection(
    title: "EXIT CODES",
    body: """
        0    stopped by SIGTERM or SIGINT after draining
        2    usage error (bad option, unreadable key file, address not available, --fallback-image not an acceptable image)
        3    the cache directory is unusable
      """)

  static let listen = OptionKey<String>.option(
    long: "listen", valueName: "ADDR:PORT",
    help: "The address and port to listen on, an IP literal ([::1]:8080 for IPv6; default 127.0.0.1:8080).")
  static let metricsListen = OptionKey<String>.option(
    long: "metrics-listen", valueName: "ADDR:PORT",
    help:
      "Answer /metrics and /readyz on this address only (the public listener then answers them 404; /healthz stays on both)."
  )
  static let keyFile = OptionKey<String>.option(
    long: "key-file", valueName: "FILE",
    help: "Signing keys, one hex key per line: the first signs, every one verifies (rotation).")
  static let maximumConnections = OptionKey<Int>.integer(
    long: "max-connections", valueName: "N", bound: .positive,
    help: "Client connections open at once; past it, 503 overloaded (default 512).")
  static let maximumFetches = OptionKey<Int>.integer(
    long: "max-fetches", valueName: "N", bound: .positive,
    help: "Distinct URLs fetched upstream at once; past it, 503 overloaded (default 64).")
  static let threads = OptionKey<Int>.integer(
    long: "threads", valueName: "N", bound: .positive,
    help: "Event-loop threads answering connections (default: the online CPUs, 1 to 8).")
  static let idleTimeout = OptionKey<Double>.duration(
    long: "idle-timeout", valueName: "DURATION", bound: .positive,
    help: "Close a connection idle this long (seconds, or 500ms, 2s, 1m), the slowloris bound (default 10).")
  static let headTimeout = OptionKey<Double>.duration(
    long: "head-timeout", valueName: "DURATION", bound: .positive,
    help: "A request head must be complete this long after its first byte, else 408 (default 10).")
  static let minimumRequestRate = OptionKey<Int>.integer(
    long: "min-request-rate", valueName: "BYTES", bound: .positive,
    help:
      "The slowest a request head may arrive, in bytes per second after its first second, else 408 (default 100)."
  )
  static let drainTimeout = OptionKey<Double>.duration(
    long: "drain-timeout", valueName: "DURATION", bound: .positive,
    help: "On SIGTERM, wait at most this long for requests in flight, then cut and log them (default 30).")
  static let trustForwardedFrom = OptionKey<TrustedNetworks>.parsed(
    long: "trust-forwarded-from", valueName: "LIST",
    help:
      "Addresses or CIDR blocks of the tier in front (10.0.0.0/8,192.0.2.7): only their X-Forwarded-For names the logged client, only their X-Request-Id is kept.",
    expecting: "IP addresses or CIDR blocks separated by commas"
  ) { text in
    Result { () throws(TrustedNetworks.Problem) in try TrustedNetworks(parsing: text) }
      .mapError { OptionProblem("'\(Terminal.safe($0.item))' is neither") }
  }
  static let header = OptionKey<String>.option(
    long: "header", valueName: "'NAME: VALUE'",
    help:
      "Add this header to every answer (repeatable); one naming X-Content-Type-Options or Content-Security-Policy replaces serve's default (nosniff; default-src 'none'; sandbox)."
  )
  static let fallbackImage = OptionKey<String>.option(
    long: "fallback-image", valueName: "FILE",
    help:
      "Answer a refused file (422) or a failed upstream (502, 504) on the file routes with this image instead: 200, X-Attachment-Fallback: 1, a short Cache-Control lifetime; request errors (bad signature, malformed path or URL, refused origin, overload) keep their status. Validated at start (also $ATTACHKIT_FALLBACK_IMAGE)."
  )
  static let fallbackMaxAge = OptionKey<Double>.duration(
    long: "fallback-max-age", valueName: "DURATION", bound: .nonNegative,
    help: "The Cache-Control max-age of a --fallback-image answer, whole seconds (default 60; 1m, 5m).")
  static let unsigned = FlagKey(
    long: "unsigned",
    help: "Also accept /v1/u/<base64url(url)> without a signature. For trusted networks only.")

  static let sharePort = FlagKey(
    long: "share-port",
    help:
      "Bind with SO_REUSEPORT, for a hand-over without refused connections: a new serve started with it listens beside an old one started with it, which then drains on SIGTERM. Off by default: a port in use is an error."
  )

  static let arguments: [any ArgumentKey] =
    [
      listen, metricsListen, keyFile, maximumConnections, maximumFetches, threads, idleTimeout, headTimeout,
      minimumRequestRate,
      drainTimeout, trustForwardedFrom, header, fallbackImage, fallbackMaxAge, unsigned, sharePort,
      rescueSandbox,
    ]
    + PipelineOptions.all

  /// `--rescue-sandbox strict|degraded`.
  enum SandboxMode: String, CaseIterable, Sendable {
    case strict
    case degraded
  }

  static let rescueSandbox = OptionKey<SandboxMode>.choice(
    long: "rescue-sandbox", valueName: "MODE",
    help:
      "With --rescue: strict (default) refuses to start unless attachkit sandbox's check passes (every layer in force, every probe blocked); degraded runs with what the machine allows and names the missing layers in the listening event."
  )

  /// With `--rescue`, the sandbox check `attachkit sandbox` makes, before serve listens: an
  /// incomplete sandbox refuses the start (a usage error naming what is missing) unless
  /// `--rescue-sandbox degraded`, which returns the missing layers for the listening event.
  /// `nil` without `--rescue`.
  static func checkSandbox(_ arguments: ParsedArguments) throws(UsageError) -> SandboxReport? {
    let mode = try arguments[rescueSandbox]
    guard arguments[PipelineOptions.rescue] else {
      if mode != nil {
        throw arguments.usageError("--rescue-sandbox sets how --rescue is confined: add --rescue")
      }
      return nil
    }
    var workers = RescueWorkerConfiguration()
    if let jobs = try arguments[PipelineOptions.workerJobs] { workers.jobsPerWorker = jobs }
    let report = RescueWorkers.sandboxReport(configuration: workers, keyFile: arguments[keyFile])
    if report.isComplete || mode == .degraded || RescueWorkers.underSanitizer { return report }
    let missing = report.missingLayers.map(\.rawValue).joined(separator: ", ")
    let allowed = report.allowedProbes.map(\.name).joined(separator: ", ")
    throw arguments.usageError(
      "--rescue: the rescue workers' sandbox is incomplete on this machine"
        + (report.problem.map { " (\($0))" } ?? "")
        + (missing.isEmpty ? "" : "; missing layers: \(missing)")
        + (allowed.isEmpty ? "" : "; probes that got through: \(allowed)")
        + ". See attachkit sandbox; --rescue-sandbox degraded runs with what the machine allows.")
  }

  static func start(_ arguments: ParsedArguments) throws(UsageError) -> CommandStart {
    var signals = blockStopSignals()
    let signer = try urlSigner(arguments)
    var server = try serverConfiguration(arguments)

    var pipelineConfiguration = try CommonOptions.pipelineConfiguration(arguments)
    server.fallbackImage = try fallback(arguments, limits: pipelineConfiguration.limits)
    // Before it listens: a rescue runs only in a sandbox this machine grants whole, or as asked.
    let sandbox = try checkSandbox(arguments)
    server.sandboxLayers = sandbox?.layers ?? []
    // A long-running server sweeps the cache in the background, unlike a short command.
    pipelineConfiguration.cache.sweepsInBackground = true
    // The proxy's cache serves every client: a shared cache (RFC 9111), which keeps no private
    // answer and takes its own lifetime from s-maxage.
    pipelineConfiguration.cache.isShared = true
    // Devices download from this server, not from the origin: App Transport Security judges the
    // proxy's own scheme, so an origin's plain HTTP is no warning here.
    pipelineConfiguration.warnsAboutTransportSecurity = false
    let pipeline: AttachmentPipeline
    do {
      pipeline = try AttachmentPipeline(configuration: pipelineConfiguration)
    } catch {
      Terminal.error("attachkit: \(Terminal.safe(error.message))\n")
      return .finished(.cacheUnusable)
    }
    try CommonOptions.checkStore(pipeline, arguments)
    let proxy = AttachmentServer(
      configuration: server, pipeline: pipeline, signer: signer,
      infoRecord: { url, result in
        switch result {
        case .success(let attachment): ResultRecord(input: url, attachment: attachment).json
        case .failure(let error):
          ResultRecord(input: url, error: error, source: nil, totalMicroseconds: 0).json
        }
      })
    do {
      try proxy.start()
    } catch {
      throw arguments.usageError(error.message)
    }
    // The warnings come first: whoever waits for "listening" has seen them by then.
    warnIfReadableByOthers(arguments[Self.keyFile])
    if server.acceptsUnsigned {
      event(
        "warning",
        [("message", .string("--unsigned is on: anyone who can reach this port can make it fetch any URL."))])
    }
    announceListening(proxy, server, sandbox)
    let notifier = ServiceNotifier()
    notifier.ready()
    let received = waitForStop(&signals, reloading: arguments[Self.keyFile], into: proxy, notifier: notifier)
    notifier.stopping()
    drain(proxy, after: received)
    return .finished(.success)
  }

  /// The `listening` event: the addresses, the sandbox layers missing (with `--rescue`), the pid.
  private static func announceListening(
    _ proxy: AttachmentServer, _ server: ServerConfiguration, _ sandbox: SandboxReport?
  ) {
    var listening: [(key: String, value: JSON)] = [("address", .string(addressText(server.host, proxy.port)))]
    if let metrics = server.metricsAddress {
      listening.append(("metricsAddress", .string(addressText(metrics.host, proxy.metricsPort))))
    }
    if let sandbox {
      listening.append(("sandboxMissingLayers", .array(sandbox.missingLayers.map { .string($0.rawValue) })))
    }
    event("listening", listening + [("pid", .int(Int64(getpid())))])
  }

  /// `--key-file`: the signer of the keys it holds; required.
  private static func urlSigner(_ arguments: ParsedArguments) throws(UsageError) -> URLSigner {
    guard let keyFile = arguments[Self.keyFile] else {
      throw arguments.usageError("serve needs --key-file FILE (one hex key per line)")
    }
    do {
      return try URLSigner(keyFile: keyFile)
    } catch {
      throw arguments.usageError("--key-file: \(error.message)")
    }
  }

  /// The server's settings from `--listen`, `--metrics-listen`, `--unsigned`, `--share-port`,
  /// `--deadline`, `--max-connections`, `--max-fetches`, `--idle-timeout`, `--head-timeout`, `--min-request-rate`,
  /// `--drain-timeout`, `--trust-forwarded-from`, `--fallback-max-age` and `--header` (read in
  /// that order).
  private static func serverConfiguration(_ arguments: ParsedArguments) throws(UsageError)
    -> ServerConfiguration
  {
    var server = ServerConfiguration()
    (server.host, server.port) = try listenAddress(arguments, listen) ?? ("127.0.0.1", 8080)
    if let (host, port) = try listenAddress(arguments, metricsListen) {
      server.metricsAddress = ListenAddress(host: host, port: port)
    }
    server.acceptsUnsigned = arguments[unsigned]
    server.sharesPort = arguments[sharePort]
    server.version = RootCommand.version
    server.deadlineSeconds = try PipelineOptions.deadlineSeconds(from: arguments)
    if let count = try arguments[maximumConnections] { server.maximumConnections = count }
    if let count = try arguments[maximumFetches] { server.maximumFetches = count }
    if let count = try arguments[threads] { server.threads = count }
    if let seconds = try arguments[idleTimeout] {
      // (the watch counts whole seconds: a part of one rounds up, never to 0)
      server.idleTimeoutSeconds = UInt32(clamping: Int64(min(seconds, 4e9).rounded(.up)))
    }
    if let seconds = try arguments[headTimeout] { server.requestHeadTimeoutSeconds = seconds }
    if let bytes = try arguments[minimumRequestRate] { server.minimumRequestBytesPerSecond = Double(bytes) }
    if let seconds = try arguments[drainTimeout] { server.drainSeconds = seconds }
    if let networks = try arguments[trustForwardedFrom] { server.trustedForwarders = networks }
    if let seconds = try arguments[fallbackMaxAge] {
      guard seconds == seconds.rounded(), seconds <= 1e9 else {
        throw arguments.usageError(
          "--fallback-max-age expects whole seconds for Cache-Control's max-age, got \(seconds) s")
      }
      server.fallbackLifetimeSeconds = Int(seconds)
    }
    do {
      server.responseHeaders = try ResponseHeaderFields(addingLines: arguments.values(of: header))
    } catch {
      throw arguments.usageError("--header: " + Terminal.safe(error.message))
    }
    return server
  }

  /// `--fallback-image`: the image, validated now under the pipeline's `limits` (a usage error,
  /// exit 2, when it is not an acceptable image attachment); `nil` when the option is not given.
  private static func fallback(_ arguments: ParsedArguments, limits: ValidationLimits) throws(UsageError)
    -> FallbackImage?
  {
    guard let path = arguments[fallbackImage] else { return nil }
    do {
      return try FallbackImage(path: path, limits: limits)
    } catch {
      let detected = error.detected.map { " (the bytes are \($0))" } ?? ""
      throw arguments.usageError(
        "--fallback-image \(Terminal.safe(path)) is not an acceptable attachment: "
          + "\(error.code.rawValue): \(Terminal.safe(error.message))\(detected)")
    }
  }

  /// `--listen` or `--metrics-listen` (`option`): `ADDR:PORT`, `[IPv6]:PORT`, or `:PORT` / `PORT`
  /// for loopback; `nil` when the option is not given.
  private static func listenAddress(_ arguments: ParsedArguments, _ option: OptionKey<String>)
    throws(UsageError)
    -> (String, UInt16)?
  {
    guard let text = arguments[option] else { return nil }
    var host = "127.0.0.1"
    var portText = Substring(text)
    if let colon = text.lastIndex(of: ":") {
      let hostPart = text[..<colon]
      portText = text[text.index(after: colon)...]
      if !hostPart.isEmpty {
        host = String(
          hostPart.hasPrefix("[") && hostPart.hasSuffix("]") ? hostPart.dropFirst().dropLast() : hostPart)
      }
    }
    guard let port = UInt16(portText) else {
      throw arguments.usageError(
        "--\(option.spec.name) expects ADDR:PORT with a port from 0 to 65535, got '\(Terminal.safe(text))'")
    }
    return (host, port)
  }

  private static func addressText(_ host: String, _ port: UInt16) -> String {
    host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
  }

  /// A JSON line on standard error about the server itself (the access log's neighbours),
  /// stamped with the same `time` field as the access log's lines. `event` comes first, so that a
  /// filter for lines that begin with `{"time"` (docs/deploy.md's goaccess command) keeps only
  /// the requests.
  static func event(_ name: String, _ fields: [(key: String, value: JSON)]) {
    Terminal.error(
      JSON.object([("event", .string(name)), ("time", .string(LogTime.now()))] + fields).text + "\n")
  }
}
