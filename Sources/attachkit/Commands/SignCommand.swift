import ArgumentParsing
import AttachmentKit
import AttachmentServer
import Glibc

/// `attachkit sign URL...`: prints the signed proxy path of each URL (the full URL with
/// `--base`), one a line in order, for backends that build push payloads from the shell; `-`
/// reads the URLs from standard input. Every URL is checked before anything is printed. The
/// path's form is a row of the route table (``ProxyRoute``): `--route` picks what it answers,
/// `--encrypt` hides the origin, `--expires` adds a signed expiry.
enum SignCommand: RunnableCommand {
  static let configuration = CommandConfiguration(
    name: "sign",
    abstract: "Print the signed 'attachkit serve' path of a URL.",
    discussion: """
      Signs with the first key of the key file: /v1/a/<hmac-sha256 hex of the URL>/<base64url(url)>. \
      '--route info' signs 'info', a line feed and the URL instead, so a push's URL never opens its record. \
      '--expires 1h' signs an expiry too: /v1/a/<signature>/<unix seconds>/<base64url(url)>, refused with \
      410 signature_expired once it has passed. '--encrypt' hides the origin: /v1/e/[<expiry>/]<base64url(\
      nonce, AES-256-GCM ciphertext and tag)>, a new path each time. '--profile android' (or ios-compact) \
      puts the profile before the route, /v1/android/a/<signature>/<base64url(url)>, and signs it: serve \
      answers that path with the profile's derivative (ios, the default, has no segment).
      Several URLs print one path a line, in their order; '-' (given alone) reads the URLs from standard \
      input, one a line (blank lines and '#' comments skipped, as prefetch reads a list). Every URL must \
      be an absolute http or https URL with a host, checked before anything is printed: one that is not \
      (a '-' among URLs, or on a line of its own, too) is a usage error and nothing is printed.
      """,
    examples: [
      "attachkit sign --key-file keys https://cdn.example.com/push/123.jpg",
      "attachkit sign --key-file keys --base https://media.example.com https://cdn.example.com/a.mp4",
      "ATTACHKIT_KEY_FILE=keys attachkit sign --expires 1h --encrypt https://cdn.example.com/a.jpg",
      "attachkit sign --key-file keys --profile android https://cdn.example.com/push/123.jpg",
      "cut -f3 campaign.tsv | ATTACHKIT_KEY_FILE=keys attachkit sign - > paths.txt",
    ],
    sections: [
      HelpSection(
        title: "EXIT CODES",
        body: """
            0    printed
            2    usage error (bad option, unreadable key file, a URL that is not an absolute
                 http or https URL): nothing printed
          """)
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
  static let urls = PositionalKey<[String]>.repeating(
    name: "url", valueName: "URL",
    help:
      "The URLs to sign, one path printed a line in their order; '-' alone reads them from standard input.")

  static let arguments: [any ArgumentKey] = [keyFile, base, route, expires, encrypt, profile, urls]

  static func start(_ arguments: ParsedArguments) throws(UsageError) -> CommandStart {
    guard let keyFile = arguments[Self.keyFile] else {
      throw arguments.usageError("sign needs --key-file FILE (or ATTACHKIT_KEY_FILE)")
    }
    let urls = try checkedURLs(arguments)
    let answer = (try arguments[Self.route] ?? .a).answer
    guard
      let route = ProxyRoute.serving(answer, protection: arguments[Self.encrypt] ? .sealed : .signed)
    else { throw arguments.usageError("no route serves that with that protection") }
    let expires = try arguments[Self.expires].map { Int64(time(nil)) + $0 }
    var base = arguments[Self.base] ?? ""
    while base.hasSuffix("/") { base.removeLast() }
    var lines = ""
    do {
      let signer = try URLSigner(keyFile: keyFile)
      // `ios` is the default profile, named by no segment: asking for it is asking for none.
      let profile = arguments[Self.profile].flatMap { $0 == "ios" ? nil : $0 }
      for url in urls {
        lines += base + (try signer.path(for: url, route: route, expires: expires, profile: profile)) + "\n"
      }
    } catch {
      throw arguments.usageError(error.message)
    }
    Terminal.out(lines)  // all or nothing: a URL that cannot be signed prints no path
    return .finished(.success)
  }

  /// The URLs to sign: the positionals, or standard input's lines for a lone `-`; each checked
  /// as an absolute http(s) URL with a host (``AttachmentURL``), so no path is printed for a URL
  /// serve would refuse.
  private static func checkedURLs(_ arguments: ParsedArguments) throws(UsageError) -> [String] {
    let words = arguments[Self.urls]
    var entries = words.enumerated().map { URLList.Entry(text: $0.element, line: $0.offset + 1) }
    let fromList = words == ["-"]
    if fromList {
      do {
        entries = try URLList.entries(from: "-")
      } catch {
        throw arguments.usageError(error.message)
      }
    } else if words.contains("-") {
      throw arguments.usageError("'-' reads the URLs from standard input: give it alone, not among URLs")
    }
    guard !entries.isEmpty else {
      throw arguments.usageError("sign needs a URL (or '-' to read them from standard input)")
    }
    for entry in entries {
      do {
        // A line of standard input is one URL (its error names the line); a word of the
        // command line is checked as it is.
        _ = try fromList ? entry.url() : AttachmentURL(entry.text)
      } catch {
        let which = !fromList && entries.count > 1 ? " URL \(entry.line) of \(entries.count)" : ""
        throw arguments.usageError(
          "cannot sign\(which): \(error.code.rawValue): \(Terminal.safe(error.message))")
      }
    }
    return entries.map(\.text)
  }
}
