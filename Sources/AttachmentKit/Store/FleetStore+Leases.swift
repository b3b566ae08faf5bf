/// Leases: one instance of the fleet does a key's miss (the download, the check, a rescue)
/// while the others wait for its record. A lease is a small object, `leases/<sha256 of the
/// key>`, written with `If-None-Match: *` (so one writer wins), naming its holder and when it
/// expires: the holder's own deadline (its miss cannot run past it), at most
/// ``StoreConfiguration/leaseSeconds`` from now. A holder releases it (writes it expired) when
/// its miss ends; a holder that died leaves it to expire, and the next instance takes it over
/// through a claim object written once (`leases/<sha256>~<holder>`): one taker per expired lease.
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
  /// taken over through a claim on that very lease (``takeOver(_:from:name:timeout:)``), so that
  /// of the instances that find it expired at once exactly one holds it.
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
    let lease = Lease(existing.body)
    if let lease, lease.expires > FileSystem.now() { return .held(lease) }
    // Expired (its holder died, or released it): take it over.
    return takeOver(mine, from: lease?.holder ?? "unreadable", name: name, timeout: timeout)
  }

  /// Takes over the expired lease of `holder` at `name`: `mine` is written once as the claim
  /// `<name>~<holder>` with `If-None-Match: *`, which one instance alone can write; the winner
  /// then writes `mine` as the lease itself (for the instances that read it next; one that
  /// still finds the expired lease tries the same claim and finds the winner's). A claim whose
  /// own holder died meanwhile is taken over the same way, a few times at most.
  private func takeOver(_ mine: Lease, from holder: String, name: String, timeout: Duration) -> LeaseAttempt {
    var expired = holder
    for _ in 0..<8 {
      let claim = name + "~" + expired
      let claimed = client.put(claim, body: Array(mine.text.utf8), ifAbsent: true, timeout: timeout)
      if claimed.failure == nil, claimed.status == 200 {
        // Best effort: a reader that still finds the expired lease is sent to this claim.
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
