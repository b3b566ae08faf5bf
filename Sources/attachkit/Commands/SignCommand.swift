import ArgumentParsing
import AttachmentKit
import AttachmentServer

/// `attachkit sign URL`: prints the signed proxy path of a URL (the full URL with `--base`),
/// for backends that build push payloads from the shell.
enum SignCommand: RunnableCommand {
  static let configuration = CommandConfiguration(
    name: "sign",
    abstract: "Print the signed 'attachkit serve' path of a URL.",
    discussion: """
      Signs with the first key of the key file: /v1/a/<hmac-sha256 hex of the URL>/<base64url(url)>. \
      '--route info' signs 'info', a line feed and the URL instead, so a push's URL never opens its record.
      """,
    examples: [
      "attachkit sign --key-file keys https://cdn.example.com/push/123.jpg",
      "attachkit sign --key-file keys --base https://media.example.com https://cdn.example.com/a.mp4",
    ],
    sections: [
      HelpSection(
        title: "EXIT CODES", body: "  0    printed\n  2    usage error (bad option, unreadable key file)\n")
    ])

  /// What `--route` names: the file, or its JSON record.
  enum Route: String, CaseIterable, Sendable {
    case a, info
  }

  static let keyFile = OptionKey<String>.option(
    long: "key-file", valueName: "FILE", help: "Signing keys, one hex key per line; the first signs.")
  static let base = OptionKey<String>.option(
    long: "base", valueName: "URL", help: "Print a full URL on this base (https://media.example.com).")
  static let route = OptionKey<Route>.choice(
    long: "route", valueName: "ROUTE", help: "'a' for the file (default) or 'info' for its JSON record.")
  static let url = PositionalKey<String>.positional(name: "url", valueName: "URL", help: "The URL to sign.")

  static let arguments: [any ArgumentKey] = [keyFile, base, route, url]

  static func start(_ arguments: ParsedArguments) throws(UsageError) -> CommandStart {
    guard let keyFile = arguments[Self.keyFile] else {
      throw arguments.usageError("sign needs --key-file FILE")
    }
    guard let url = arguments[Self.url] else { throw arguments.usageError("sign needs a URL") }
    let route = try arguments[Self.route] ?? .a
    let path: String
    do {
      let signer = try URLSigner(keyFile: keyFile)
      path = try signer.path(for: url, route: route == .info ? .info : .attachment)
    } catch {
      throw arguments.usageError(error.message)
    }
    var base = arguments[Self.base] ?? ""
    while base.hasSuffix("/") { base.removeLast() }
    Terminal.out(base + path + "\n")
    return .finished(.success)
  }
}
