import ArgumentParsing
import AttachmentKit
import AttachmentServer
import Glibc

/// `attachkit sign URL`: prints the signed proxy path of a URL (the full URL with `--base`),
/// for backends that build push payloads from the shell. The path's form is a row of the route
/// table (``ProxyRoute``): `--route` picks what it answers, `--encrypt` hides the origin,
/// `--expires` adds a signed expiry.
enum SignCommand: RunnableCommand {
  static let configuration = CommandConfiguration(
    name: "sign",
    abstract: "Print the signed 'attachkit serve' path of a URL.",
    discussion: """
      Signs with the first key of the key file: /v1/a/<hmac-sha256 hex of the URL>/<base64url(url)>. \
      '--route info' signs 'info', a line feed and the URL instead, so a push's URL never opens its record. \
      '--expires 1h' signs an expiry too: /v1/a/<signature>/<unix seconds>/<base64url(url)>, refused with \
      410 signature_expired once it has passed. '--encrypt' hides the origin: /v1/e/[<expiry>/]<base64url(\
      nonce, AES-256-GCM ciphertext and tag)>, a new path each time. '--profile android' (or ios-compact)       puts the profile before the route, /v1/android/a/<signature>/<base64url(url)>, and signs it: serve       answers that path with the profile's derivative (ios, the default, has no segment).
      """,
    examples: [
      "attachkit sign --key-file keys https://cdn.example.com/push/123.jpg",
      "attachkit sign --key-file keys --base https://media.example.com https://cdn.example.com/a.mp4",
      "ATTACHKIT_KEY_FILE=keys attachkit sign --expires 1h --encrypt https://cdn.example.com/a.jpg",
      "attachkit sign --key-file keys --profile android https://cdn.example.com/push/123.jpg",
    ],
    sections: [
      HelpSection(
        title: "EXIT CODES", body: "  0    printed\n  2    usage error (bad option, unreadable key file)\n")
    ], environmentPrefix: "ATTACHKIT_")

  /// What `--route` names: the file, or its JSON record.
  enum Route: String, CaseIterable, Sendable {
    case a, info

    /// What the route answers with, in the route table.
    var answer: ProxyRoute.Answer { self == .a ? .file : .info }
  }

  static let keyFile = OptionKey<String>.option(
    long: "key-file", valueName: "FILE", help: "Signing keys, one hex key per line; the first signs.")
  static let base = OptionKey<String>.option(
    long: "base", valueName: "URL", help: "Print a full URL on this base (https://media.example.com).")
  static let route = OptionKey<Route>.choice(
    long: "route", valueName: "ROUTE", help: "'a' for the file (default) or 'info' for its JSON record.")
  static let expires = OptionKey<Int64>.parsed(
    long: "expires", valueName: "DURATION",
    help: "Expire the path after this long: 90s, 15m, 1h, 7d (at most 3650d); signed with it.",
    expecting: "a positive duration such as 90s, 15m, 1h or 7d"
  ) { text in
    guard let seconds = SignatureExpiry.seconds(ofDuration: text) else {
      return .failure(OptionProblem("'\(Terminal.safe(text))' is not one"))
    }
    return .success(seconds)
  }
  static let encrypt = FlagKey(
    long: "encrypt", help: "Hide the origin: encrypt the URL (AES-256-GCM, a key derived from the first key)."
  )
  static let profile = OptionKey<String>.option(
    long: "profile", valueName: "NAME",
    help:
      "The profile the path asks for: android or ios-compact (ios, the default, has no segment); covered by the signature."
  )
  static let url = PositionalKey<String>.positional(name: "url", valueName: "URL", help: "The URL to sign.")

  static let arguments: [any ArgumentKey] = [keyFile, base, route, expires, encrypt, profile, url]

  static func start(_ arguments: ParsedArguments) throws(UsageError) -> CommandStart {
    guard let keyFile = arguments[Self.keyFile] else {
      throw arguments.usageError("sign needs --key-file FILE (or ATTACHKIT_KEY_FILE)")
    }
    guard let url = arguments[Self.url] else { throw arguments.usageError("sign needs a URL") }
    let answer = (try arguments[Self.route] ?? .a).answer
    guard
      let route = ProxyRoute.serving(answer, protection: arguments[Self.encrypt] ? .sealed : .signed)
    else { throw arguments.usageError("no route serves that with that protection") }
    let expires = try arguments[Self.expires].map { Int64(time(nil)) + $0 }
    let path: String
    do {
      let signer = try URLSigner(keyFile: keyFile)
      // `ios` is the default profile, named by no segment: asking for it is asking for none.
      let profile = arguments[Self.profile].flatMap { $0 == "ios" ? nil : $0 }
      path = try signer.path(for: url, route: route, expires: expires, profile: profile)
    } catch {
      throw arguments.usageError(error.message)
    }
    var base = arguments[Self.base] ?? ""
    while base.hasSuffix("/") { base.removeLast() }
    Terminal.out(base + path + "\n")
    return .finished(.success)
  }
}
