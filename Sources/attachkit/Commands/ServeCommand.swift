import ArgumentParsing
import AttachmentKit
import AttachmentServer
import Glibc
import PipelineOptions

/// `attachkit serve`: the push-media proxy. Answers signed URLs with validated, cached files
/// until SIGTERM or SIGINT, then drains and exits 0.
enum ServeCommand: RunnableCommand {
  static let configuration = CommandConfiguration(
    name: "serve",
    abstract: "Run the push-media proxy: signed URLs in, validated cached files out.",
    discussion: """
      Routes: GET|HEAD /v1/a/<sig>/<base64url(url)> (the file), GET /v1/info/<sig>/<base64url(url)> \
      (its JSON record), GET /healthz, GET /readyz (cache usable, keys loaded), GET /metrics (Prometheus). \
      Sign paths with 'attachkit sign'. \
      Writes one JSON line per request to standard error. SIGTERM stops accepting, finishes the \
      requests in flight and exits 0.
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
        2    usage error (bad option, unreadable key file, address not available)
        3    the cache directory is unusable
      """)

  static let listen = OptionKey<String>.option(
    long: "listen", valueName: "ADDR:PORT",
    help: "The address and port to listen on, an IP literal ([::1]:8080 for IPv6; default 127.0.0.1:8080).")
  static let keyFile = OptionKey<String>.option(
    long: "key-file", valueName: "FILE",
    help: "Signing keys, one hex key per line: the first signs, every one verifies (rotation).")
  static let maximumConnections = OptionKey<Int>.integer(
    long: "max-connections", valueName: "N", bound: .positive,
    help: "Client connections open at once; past it, 503 overloaded (default 512).")
  static let maximumFetches = OptionKey<Int>.integer(
    long: "max-fetches", valueName: "N", bound: .positive,
    help: "Distinct URLs fetched upstream at once; past it, 503 overloaded (default 64).")
  static let idleTimeout = OptionKey<Int>.integer(
    long: "idle-timeout", valueName: "SECONDS", bound: .positive,
    help: "Close a connection idle this long, the slowloris bound (default 10).")
  static let unsigned = FlagKey(
    long: "unsigned",
    help: "Also accept /v1/u/<base64url(url)> without a signature. For trusted networks only.")

  static let arguments: [any ArgumentKey] =
    [listen, keyFile, maximumConnections, maximumFetches, idleTimeout, unsigned] + PipelineOptions.all

  static func start(_ arguments: ParsedArguments) throws(UsageError) -> CommandStart {
    var signals = blockStopSignals()
    let signer = try urlSigner(arguments)
    let server = try serverConfiguration(arguments)

    var pipelineConfiguration = try CommonOptions.pipelineConfiguration(arguments)
    // A long-running server sweeps the cache in the background, unlike a short command.
    pipelineConfiguration.cache.sweepsInBackground = true
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
    event(
      "listening",
      [("address", .string(addressText(server.host, proxy.port))), ("pid", .int(Int64(getpid())))])
    if server.acceptsUnsigned {
      event(
        "warning",
        [("message", .string("--unsigned is on: anyone who can reach this port can make it fetch any URL."))])
    }
    var received: Int32 = 0
    while sigwait(&signals, &received) != 0 {}
    event("draining", [("signal", .string(received == SIGTERM ? "SIGTERM" : "SIGINT"))])
    proxy.shutdown()
    event("stopped", [])
    return .finished(.success)
  }

  /// Blocks SIGTERM and SIGINT in the calling thread and returns the set. Every thread started
  /// from here on (libmicrohttpd's, the pipeline's) inherits the mask, so the two signals are
  /// taken only by the `sigwait` that waits for them.
  private static func blockStopSignals() -> sigset_t {
    var signals = sigset_t()
    sigemptyset(&signals)
    sigaddset(&signals, SIGTERM)
    sigaddset(&signals, SIGINT)
    pthread_sigmask(SIG_BLOCK, &signals, nil)
    return signals
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

  /// The server's settings from `--listen`, `--unsigned`, `--deadline`, `--max-connections`,
  /// `--max-fetches` and `--idle-timeout` (read in that order).
  private static func serverConfiguration(_ arguments: ParsedArguments) throws(UsageError)
    -> ServerConfiguration
  {
    var server = ServerConfiguration()
    (server.host, server.port) = try listenAddress(arguments)
    server.acceptsUnsigned = arguments[unsigned]
    server.version = RootCommand.version
    server.deadlineSeconds = try PipelineOptions.deadlineSeconds(from: arguments)
    if let count = try arguments[maximumConnections] { server.maximumConnections = count }
    if let count = try arguments[maximumFetches] { server.maximumFetches = count }
    if let seconds = try arguments[idleTimeout] {
      server.idleTimeoutSeconds = UInt32(clamping: seconds)
    }
    return server
  }

  /// `--listen`: `ADDR:PORT`, `[IPv6]:PORT`, or `:PORT` / `PORT` for loopback.
  private static func listenAddress(_ arguments: ParsedArguments) throws(UsageError) -> (String, UInt16) {
    guard let text = arguments[listen] else { return ("127.0.0.1", 8080) }
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
        "--listen expects ADDR:PORT with a port from 0 to 65535, got '\(Terminal.safe(text))'")
    }
    return (host, port)
  }

  private static func addressText(_ host: String, _ port: UInt16) -> String {
    host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
  }

  /// A JSON line on standard error about the server itself (the access log's neighbours).
  private static func event(_ name: String, _ fields: [(key: String, value: JSON)]) {
    Terminal.error(JSON.object([("event", .string(name))] + fields).text + "\n")
  }
}
