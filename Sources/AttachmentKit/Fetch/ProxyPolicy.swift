/// What the private-network guard can still check when requests go through a proxy.
///
/// Through a proxy every socket goes to the proxy, so the open-socket check sees only the
/// proxy's address. These checks stand in for it where they can: on the URL's host before
/// the request, and on every redirect's host before it is followed.
enum ProxyPolicy {
  /// The error for a configuration the library refuses: a proxy with the guard on, without
  /// the caller accepting that destinations go unchecked. `nil` when it may be used.
  static func configurationProblem(_ configuration: DownloaderConfiguration) -> AttachmentError? {
    guard let proxy = configuration.proxy, !configuration.allowPrivateNetworks,
      !proxy.acceptsUncheckedDestinations
    else { return nil }
    return AttachmentError(
      .invalidConfiguration,
      "A proxy hides each request's real address from the private-network guard; set"
        + " proxy.acceptsUncheckedDestinations (--proxy-unchecked) to accept that, or allowPrivateNetworks.")
  }

  /// Whether the guard must check hosts itself: a proxy is set and private networks are not allowed.
  static func checksHosts(_ configuration: DownloaderConfiguration) -> Bool {
    configuration.proxy != nil && !configuration.allowPrivateNetworks
  }

  /// The `blocked_address` error for a request or redirect `url` whose host is refused, or `nil`.
  ///
  /// `url` may be absolute or scheme-relative (`//host/path`); a relative reference keeps the
  /// host already checked and passes.
  static func refusal(url: some StringProtocol) -> AttachmentError? {
    let text = url.hasPrefix("//") ? "http:" + url : String(url)
    guard let authority = URLAuthority(text), let reason = AddressPolicy.refusal(host: authority.host)?.reason
    else { return nil }
    return AttachmentError(
      .blockedAddress,
      "The URL leads to \(reason); private networks are not allowed (see allowPrivateNetworks).")
  }
}
