/// Leases: one instance of the fleet does a key's miss (the download, the check, a rescue)
/// while the others wait for its record. A lease is a small object, `leases/<sha256 of the
/// key>`, written with `If-None-Match: *` (so one writer wins), naming its holder and when it
/// expires: the holder's own deadline (its miss cannot run past it), at most
/// ``StoreConfiguration/leaseSeconds`` from now. A holder releases it (writes it expired) when
/// its miss ends; a holder that died leaves it to expire, and the next instance takes it over.
extension FleetStore {
  /// A lease as the store holds it.
  struct Lease: Sendable, Equatable {
    /// Who holds it (a random id per miss).
    var holder: String
    /// When it expires, in seconds since 1970.
    var expires: Double

    var text: String { "lease 1\nholder \(holder)\nexpires \(expires)\n" }

    init(holder: String, expires: Double) {
      self.holder = holder
      self.expires = expires
    }

    /// Parses a lease object; `nil` for anything else (treated as expired).
    init?(_ bytes: [UInt8]) {
      var holder: String?
      var expires: Double?
      for line in String(decoding: bytes, as: UTF8.self).split(separator: "\n") {
        if line.hasPrefix("holder ") { holder = String(line.dropFirst(7)) }
        if line.hasPrefix("expires ") { expires = Double(line.dropFirst(8)) }
      }
      guard let holder, let expires else { return nil }
      self.holder = holder
      self.expires = expires
    }
  }

  /// What trying to take a key's lease found.
  enum LeaseAttempt: Sendable, Equatable {
    /// This miss holds it now.
    case taken(Lease)
    /// Another holder's lease, not expired.
    case held(Lease)
    /// The store did not answer (or refused): go on as if there were no store.
    case unavailable
  }

  /// The lease object's name for `key`.
  static func leaseName(for key: URLKey) -> String? {
    recordName(for: key).map { "leases/" + $0.dropFirst("records/".count) }
  }

  /// Tries to take `key`'s lease until `expires` (seconds since 1970), within `timeout`: a new
  /// lease with `If-None-Match: *`; an existing one that has expired (or does not parse) is
  /// taken over by writing it again and reading it back (the last writer holds it; two takers
  /// at once may both do the work, which is harmless: the same bytes).
  func takeLease(_ key: URLKey, expires: Double, timeout: Duration) -> LeaseAttempt {
    guard let name = Self.leaseName(for: key).map(configuration.key) else { return .unavailable }
    let mine = Lease(holder: String(UInt64.random(in: 0...UInt64.max), radix: 16), expires: expires)
    let created = client.put(name, body: Array(mine.text.utf8), ifAbsent: true, timeout: timeout)
    if created.failure == nil, created.status == 200 {
      count { $0.leasesTaken += 1 }
      return .taken(mine)
    }
    guard created.failure == nil, created.status == 412 || created.status == 409 else { return .unavailable }
    let existing = client.get(name, maximumBytes: 4096, timeout: timeout)
    guard existing.failure == nil, existing.status == 200 else { return .unavailable }
    if let lease = Lease(existing.body), lease.expires > FileSystem.now() { return .held(lease) }
    // Expired (its holder died, or released it): take it over.
    let rewritten = client.put(name, body: Array(mine.text.utf8), ifAbsent: false, timeout: timeout)
    guard rewritten.failure == nil, rewritten.status == 200 else { return .unavailable }
    let check = client.get(name, maximumBytes: 4096, timeout: timeout)
    guard check.status == 200, let now = Lease(check.body) else { return .unavailable }
    if now == mine {
      count { $0.leasesTaken += 1 }
      return .taken(mine)
    }
    return .held(now)
  }

  /// Releases `lease` of `key` (writes it expired), in the background: the next miss of the
  /// key (a refresh, a retry after a failure) need not wait for its expiry.
  func release(_ lease: Lease, of key: URLKey) {
    guard let name = Self.leaseName(for: key).map(configuration.key) else { return }
    let released = Lease(holder: lease.holder, expires: 0)
    enqueue(name) { [self] in
      _ = client.put(name, body: Array(released.text.utf8), ifAbsent: false, timeout: writeTimeout)
    }
  }

  var writeTimeout: Duration { .milliseconds(Int64(configuration.writeTimeoutSeconds * 1000)) }
}
