/// App Transport Security (ATS): iOS refuses plain-HTTP connections from an app and its
/// extensions unless the app's Info.plist declares an exception (`NSAllowsArbitraryLoads`,
/// `NSExceptionDomains`), so a Notification Service Extension that downloads the attachment
/// itself fails on an `http://` URL that this service fetched without trouble.
///
/// The warning tells a backend so before it sends the push. It starts with ``code``, so a
/// caller can match it; it never repeats the URL (which may carry credentials).
public enum TransportSecurity {
  /// The token every ATS warning starts with, followed by a colon.
  public static let code = "ats"

  /// The warning for a result requested at `requested` and answered from `final` (the last URL
  /// of its redirects; nil when unknown) over `tls` (nil when not known), or nil when both are
  /// HTTPS and the TLS meets ATS: version 1.2 or later with forward secrecy. Intermediate
  /// redirects are not known here.
  public static func warning(requested: String, final: String?, tls: TLSFacts? = nil) -> String? {
    let plain = [requested, final ?? requested].contains { isPlainHTTP($0) }
    if plain {
      return
        "\(code): fetched over plain HTTP; iOS App Transport Security blocks HTTP in an app extension unless the app declares an exception (NSAllowsArbitraryLoads or NSExceptionDomains), so a device downloading this URL itself would fail."
    }
    guard let tls else { return nil }
    if tls.versionNumber < 0x0303 {
      return
        "\(code): fetched over \(tls.version); iOS App Transport Security requires TLS 1.2 or later unless the app declares an exception (NSExceptionMinimumTLSVersion), so a device downloading this URL itself would fail."
    }
    if !tls.forwardSecrecy {
      return
        "\(code): fetched over \(tls.version) without forward secrecy (an RSA key exchange); iOS App Transport Security requires an ECDHE cipher suite unless the app declares an exception (NSExceptionRequiresForwardSecrecy false), so a device downloading this URL itself would fail."
    }
    return nil
  }

  /// Whether `url` has the scheme `http` (in any letter case).
  private static func isPlainHTTP(_ url: String) -> Bool {
    url.prefix(7).lowercased() == "http://"
  }
}
