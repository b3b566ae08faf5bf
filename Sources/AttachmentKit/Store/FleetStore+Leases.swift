/// Leases: one instance of the fleet does a key's miss (the download, the check, a rescue)
/// while the others wait for its record. A lease is a small object, `leases/<sha256 of the
/// key>`, written with `If-None-Match: *` (so one writer wins), naming its holder and when it
/// expires: the holder's own deadline (its miss cannot run past it), at most
/// ``StoreConfiguration/leaseSeconds`` from now. A holder releases it (writes it expired) when
/// its miss ends, after what it published is written; a holder that died leaves it to expire. An
/// instance that finds a lease over reads the record again (the holder may have written it since
/// this instance's first read), then takes the lease over through a claim object written once
/// (`leases/<sha256>~<holder>`): one taker per lease that is over.
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

  /// What trying to take (or reading) a key's lease found.
  enum LeaseAttempt: Sendable, Equatable {
    /// This miss holds it now.
    case taken(Lease)
    /// Another holder's lease, not expired.
    case held(Lease)
    /// A lease that is over: its holder released it (its miss ended, and what it published is in
    /// the store by then) or died. Read the record again before taking it over
    /// (``takeOver(_:from:expires:timeout:)``): it may have been written after this miss read it.
    case over(holder: String)
    /// The store did not answer (or refused): go on as if there were no store.
    case unavailable
  }

  /// The lease object's name for `key`.
  static func leaseName(for key: URLKey) -> String? {
    recordName(for: key).map { "leases/" + $0.dropFirst("records/".count) }
  }

  /// Tries to take `key`'s lease until `expires` (seconds since 1970), within `timeout`: a new
  /// lease with `If-None-Match: *` (one writer wins); an existing one is reported, held or over.
  func takeLease(_ key: URLKey, expires: Double, timeout: Duration) -> LeaseAttempt {
    guard let name = Self.leaseName(for: key).map(configuration.key) else { return .unavailable }
    let mine = Self.newLease(expires: expires)
    let created = client.put(name, body: Array(mine.text.utf8), ifAbsent: true, timeout: timeout)
    if created.failure == nil, created.status == 200 {
      count { $0.leasesTaken += 1 }
      return .taken(mine)
    }
    guard created.failure == nil, created.status == 412 || created.status == 409 else { return .unavailable }
    return read(name, timeout: timeout)
  }

  /// `key`'s lease as the store holds it now: held (not expired), over, or unavailable (also
  /// when there is none: a waiter then takes it again).
  func currentLease(of key: URLKey, timeout: Duration) -> LeaseAttempt {
    guard let name = Self.leaseName(for: key).map(configuration.key) else { return .unavailable }
    return read(name, timeout: timeout)
  }

  private func read(_ name: String, timeout: Duration) -> LeaseAttempt {
    let existing = client.get(name, maximumBytes: 4096, timeout: timeout)
    guard existing.failure == nil else { return .unavailable }
    if existing.status == 404 { return .over(holder: "none") }
    guard existing.status == 200 else { return .unavailable }
    guard let lease = Lease(existing.body) else { return .over(holder: "unreadable") }
    return lease.expires > FileSystem.now() ? .held(lease) : .over(holder: lease.holder)
  }

  private static func newLease(expires: Double) -> Lease {
    Lease(holder: String(UInt64.random(in: 0...UInt64.max), radix: 16), expires: expires)
  }

  /// Takes over `key`'s lease that `holder` held and is over, until `expires`: the new lease is
  /// written once as the claim `<lease>~<holder>` with `If-None-Match: *`, which one instance
  /// alone can write, so that of the instances that find it over at once exactly one holds it;
  /// the winner then writes it as the lease itself (for the instances that read it next; one
  /// that still finds the old lease tries the same claim and finds the winner's). A claim whose
  /// own holder died meanwhile is taken over the same way, a few times at most.
  func takeOver(_ key: URLKey, from holder: String, expires: Double, timeout: Duration) -> LeaseAttempt {
    guard let name = Self.leaseName(for: key).map(configuration.key) else { return .unavailable }
    let mine = Self.newLease(expires: expires)
    var expired = holder
    for _ in 0..<8 {
      let claim = name + "~" + expired
      let claimed = client.put(claim, body: Array(mine.text.utf8), ifAbsent: true, timeout: timeout)
      if claimed.failure == nil, claimed.status == 200 {
        // Best effort: a reader that still finds the old lease is sent to this claim.
        _ = client.put(name, body: Array(mine.text.utf8), ifAbsent: false, timeout: timeout)
        count { $0.leasesTaken += 1 }
        return .taken(mine)
      }
      guard claimed.failure == nil, claimed.status == 412 || claimed.status == 409 else {
        return .unavailable
      }
      let winner = client.get(claim, maximumBytes: 4096, timeout: timeout)
      guard winner.failure == nil, winner.status == 200 else { return .unavailable }
      guard let lease = Lease(winner.body) else { return .unavailable }
      if lease.expires > FileSystem.now() { return .held(lease) }
      expired = lease.holder
    }
    return .unavailable
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
