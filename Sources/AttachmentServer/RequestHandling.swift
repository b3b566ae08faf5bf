import AttachmentKit
import CMicroHTTPD
import Glibc
import PosixLock

extension AttachmentServer {
  /// libmicrohttpd's access handler: called when a request's headers have arrived, again for
  /// each piece of a body (discarded), and again after a suspended connection is resumed.
  func handle(
    connection: OpaquePointer?, url: UnsafePointer<CChar>?, method: UnsafePointer<CChar>?,
    uploadSize: UnsafeMutablePointer<Int>?, slot: UnsafeMutablePointer<UnsafeMutableRawPointer?>
  ) -> MHD_Result {
    guard let mhd = MicroHTTPD.shared, let existing = slot.pointee else { return .NO }
    // The request-line callback made the state (``requestLine(_:)``).
    let state = Unmanaged<RequestState>.fromOpaque(existing).takeUnretainedValue()
    if case .requestLine = state.phase {
      return headersArrived(state, connection: connection, method: method, mhd: mhd)
    }
    if let uploadSize, uploadSize.pointee > 0 {
      uploadSize.pointee = 0
      return .YES
    }
    switch state.phase {
    case .answered, .requestLine: return .YES
    case .routed:
      // Resumed: the task left its answer.
      guard let reply = state.pending.withLock({ $0.take() }) else { return .YES }
      return queue(reply, on: connection, state: state, mhd: mhd)
    case .receiving:
      state.phase = .routed
    }
    switch start(state, connection: connection, mhd: mhd) {
    case .reply(let reply):
      return queue(reply, on: connection, state: state, mhd: mhd)
    case .fetch(let request):
      // Admission and the hit memo share one key: the normalized URL's bytes (the cache's key).
      guard admission.enter(pipeline.callerKey(request.url)) else {
        return queue(
          .error(AttachmentError(.overloaded, "Too many upstream fetches at once; retry later.")),
          on: connection,
          state: state, mhd: mhd)
      }
      suspended.withLock { $0 += 1 }
      mhd.suspendConnection(connection)
      let handle = ConnectionHandle(pointer: connection)
      let socket = mhd.descriptor(connection)
      Task {
        let reply = await self.answer(request, clientSocket: socket)
        state.pending.withLock { $0 = reply }
        mhd.resumeConnection(handle.pointer)
        self.suspended.withLock { $0 -= 1 }
      }
      return .YES
    }
  }

  /// The headers have arrived: the request is routed, and answered only when it needs no more
  /// (a refusal, with the connection closed); otherwise the answer waits for the call that says
  /// the request is complete, since an answer queued before that cannot keep the connection
  /// alive.
  private func headersArrived(
    _ state: RequestState, connection: OpaquePointer?, method: UnsafePointer<CChar>?, mhd: MicroHTTPD
  ) -> MHD_Result {
    // The watch may have cut the connection just now (its head was late): end it.
    guard watch.enter(.working, connection).alive else { return .NO }
    state.method = method.map { String(cString: $0) } ?? ""
    if state.listener == .published, let verified = targets.entry(for: state.target) {
      state.verified = verified
      state.route = verified.route
    } else {
      state.route = Route(target: state.target)
        .served(on: state.listener, separated: configuration.metricsAddress != nil)
    }
    state.facts = RequestFacts.read(connection, mhd: mhd, trusted: configuration.trustedForwarders)
    state.phase = .receiving
    metrics.begin()
    if let refusal = earlyRefusal(method: state.method, connection: connection, mhd: mhd) {
      return queue(refusal, on: connection, state: state, mhd: mhd)
    }
    return .YES
  }

  /// The answer due as soon as the headers are read: over the connection limit, a method
  /// other than GET or HEAD, or a request with a body. `nil` when the request may proceed.
  private func earlyRefusal(method: String, connection: OpaquePointer?, mhd: MicroHTTPD) -> Reply? {
    if metrics.connection(0) > configuration.maximumConnections {
      return .error(AttachmentError(.overloaded, "Too many connections at once; retry later."))
    }
    guard method == "GET" || method == "HEAD" else {
      var reply = Reply.error(AttachmentError(.methodNotAllowed, "Only GET and HEAD are served."))
      reply.headers.append(("Allow", "GET, HEAD"))
      return reply
    }
    let length = mhd.header(connection, "Content-Length")
    if mhd.header(connection, "Transfer-Encoding") != nil || (length != nil && length != "0") {
      return .error(AttachmentError(.badRequest, "A GET or HEAD request carries no body."))
    }
    return nil
  }

  /// libmicrohttpd's request-line callback: the request target as sent, before any decoding,
  /// on `listener`. Returns the request's state, which libmicrohttpd keeps in the request's slot
  /// until ``completed(slot:termination:)`` (called for every request this saw).
  func requestLine(_ target: UnsafePointer<CChar>?, on listener: Listener) -> UnsafeMutableRawPointer {
    let state = RequestState(target: target.map { String(cString: $0) } ?? "", listener: listener)
    return Unmanaged.passRetained(state).toOpaque()
  }

  /// libmicrohttpd's completion notice: the answer was sent, or the connection ended.
  func completed(
    connection: OpaquePointer?, slot: UnsafeMutablePointer<UnsafeMutableRawPointer?>?,
    termination: MHD_RequestTerminationCode
  ) {
    // Kept alive, the connection awaits its next head (closing, it is forgotten next).
    let after = watch.enter(.awaitingHead, connection).progress
    guard let slot, let opaque = slot.pointee else { return }
    slot.pointee = nil
    let state = Unmanaged<RequestState>.fromOpaque(opaque).takeRetainedValue()
    // A request whose headers never arrived was never counted: there is nothing to log.
    if case .requestLine = state.phase { return }
    let seconds = (ContinuousClock.now - state.start).inSeconds
    let queued = state.queued
    if configuration.accessLog {
      let completed = termination == .REQUEST_TERMINATED_COMPLETED_OK
      // A HEAD answer sends no body, whatever length its head declares.
      let bytes = DeliveredBytes.body(
        length: state.method == "HEAD" ? 0 : queued.bytes, completed: completed, headBytes: queued.headBytes,
        before: queued.before,
        after: after)
      AccessLog.write(
        AccessLog.Line(
          facts: state.facts, method: state.method, route: state.route.label,
          path: state.verified?.loggedPath ?? LoggedPath.of(target: state.target, route: state.route),
          url: queued.url,
          status: queued.status, outcome: queued.outcome, bytes: bytes, seconds: seconds,
          completed: completed, fallbackFor: queued.fallbackFor))
    }
    let sent = termination == .REQUEST_TERMINATED_COMPLETED_OK && state.method != "HEAD" ? queued.bytes : 0
    metrics.end(
      route: state.route.label, outcome: queued.outcome, code: queued.status, seconds: seconds, bytes: sent,
      fallbackFor: queued.fallbackFor)
  }

  /// What a request needs: an answer now, or a pipeline call first.
  enum Start {
    case reply(Reply)
    case fetch(PipelineRequest)
  }

  /// A request that goes on to the pipeline: its URL (parsed once, here), what the one cache
  /// lookup found, its deadlines, which answer it ends in, and its conditional headers (read
  /// once, for the fast path and the answer alike).
  struct PipelineRequest: Sendable {
    let url: AttachmentURL
    /// The profile the route names (``AttachmentProfile/ios`` when it names none).
    var profile = AttachmentProfile.ios
    let lookup: Lookup
    let deadlines: Deadlines
    let kind: ProxyRoute.Answer
    let conditions: Conditions
  }

  /// The URL and kind a route asks for once its signature verifies, or the reply that answers
  /// it at once (health, metrics, readiness, an unknown or malformed path, a bad signature).
  private func target(of route: Route) -> Result<(url: String, kind: ProxyRoute.Answer), ImmediateReply> {
    switch route {
    case .health:
      return .failure(
        ImmediateReply(reply: .text(200, "ok\n", contentType: "text/plain; charset=utf-8", outcome: "ok")))
    case .metrics:
      return .failure(ImmediateReply(reply: metricsReply()))
    case .ready:
      return .failure(ImmediateReply(reply: readinessReply()))
    case .notFound:
      return .failure(ImmediateReply(reply: .error(AttachmentError(.notFound, "No such route."))))
    case .malformed(let message):
      return .failure(ImmediateReply(reply: .error(AttachmentError(.badRequest, message))))
    case .proxy(let path):
      let kind = path.route.answer
      if path.route.protection == .unsigned && !configuration.acceptsUnsigned {
        return .failure(ImmediateReply(reply: badSignature(nil, url: path.clearURL ?? "")))
      }
      do {
        return .success((try signer.url(of: path, now: Self.unixNow()), kind))
      } catch {
        return .failure(ImmediateReply(reply: .error(error, url: path.clearURL.map(Redaction.redact))))
      }
    }
  }

  /// The time now in Unix seconds, the clock signed paths expire by.
  static func unixNow() -> Int64 { Int64(time(nil)) }

  /// The checked URL and kind of a request whose target is not in the memo: its signature
  /// verified and its URL parsed (then the target is remembered), or the reply that answers it.
  private func checkedTarget(_ state: RequestState) -> Result<
    (url: AttachmentURL, kind: ProxyRoute.Answer, profile: AttachmentProfile), ImmediateReply
  > {
    let generation = targets.generation
    let (url, kind): (String, ProxyRoute.Answer)
    switch target(of: state.route) {
    case .success(let target): (url, kind) = target
    case .failure(let immediate): return .failure(immediate)
    }
    let checked: AttachmentURL
    do {
      // Keyed once, as the pipeline keys it: the memos and admission share the cache's key
      // (one per profile: an android derivative is never a hit for an ios request).
      checked = pipeline.keyed(try AttachmentURL(url), profile: Self.profile(of: state.route))
    } catch {
      return .failure(
        ImmediateReply(
          reply: kind == .info
            ? infoReply(Redaction.redact(url), .failure(error)) : .error(error, url: Redaction.redact(url))))
    }
    targets.remember(
      state.target,
      TargetMemo.Entry(
        route: state.route, url: checked, kind: kind,
        loggedPath: LoggedPath.of(target: state.target, route: state.route)),
      verifiedIn: generation)
    return .success((checked, kind, Self.profile(of: state.route)))
  }

  /// The profile a route names (``ProxyPath/profile``), ``AttachmentProfile/ios`` when none.
  static func profile(of route: Route) -> AttachmentProfile {
    guard case .proxy(let path) = route, let name = path.profile else { return .ios }
    return AttachmentProfile.standard[name] ?? .ios
  }

  /// A reply made before any pipeline work (see ``target(of:)``).
  struct ImmediateReply: Error {
    let reply: Reply
  }

  private func start(_ state: RequestState, connection: OpaquePointer?, mhd: MicroHTTPD) -> Start {
    let checked: AttachmentURL
    let kind: ProxyRoute.Answer
    let profile: AttachmentProfile
    if let verified = state.verified {
      // The memo keeps a verified target, not its time: an expiring one is judged again.
      if case .proxy(let path) = verified.route, let expiry = path.expiry, expiry <= Self.unixNow() {
        return .reply(
          .error(
            AttachmentError(.signatureExpired, "This signed URL expired at \(expiry) (Unix seconds)."),
            url: verified.url.redacted))
      }
      (checked, kind, profile) = (verified.url, verified.kind, Self.profile(of: verified.route))
    } else {
      switch checkedTarget(state) {
      case .success(let target): (checked, kind, profile) = target
      case .failure(let immediate): return .reply(immediate.reply)
      }
    }
    let deadlines: Deadlines
    switch requestDeadlines(mhd.header(connection, "X-Deadline-Ms")) {
    case .success(let instants): deadlines = instants
    case .failure(let error): return .reply(.error(error, url: checked.redacted))
    }
    // The cheapest answer: a fresh cached copy, on this thread, with no task: remembered, or
    // from the request's one cache lookup (which the pipeline continues from on a miss).
    // Per caller's URL: with a key rule that leaves a signature out, one caller's hit or
    // refusal is never another's (the pipeline confirms each URL with the origin).
    let key = pipeline.callerKey(checked)
    let now = HitMemo.now()
    let conditions = Conditions(
      ifNoneMatch: mhd.header(connection, "If-None-Match"), range: mhd.header(connection, "Range"),
      ifRange: mhd.header(connection, "If-Range"))
    if kind == .file, let remembered = hitMemo.hit(key, now: now) {
      if let reply = FileReply.make(remembered, conditions: conditions, now: now) { return .reply(reply) }
      hitMemo.forget(key)
    }
    if let reply = rememberedReply(checked, kind: kind, now: now) { return .reply(reply) }
    let lookup = pipeline.lookup(AttachmentRequest(url: checked, deadline: deadlines.fetch, profile: profile))
    if kind == .file, case .hit(let hit) = lookup {
      hitMemo.remember(key, hit, now: now)
      if let reply = FileReply.make(hit, conditions: conditions, now: now) { return .reply(reply) }
      hitMemo.forget(key)
      // The file went away between the lookup and the open (a sweep): fetch it again.
      return .fetch(
        PipelineRequest(
          url: checked, profile: profile, lookup: .miss, deadlines: deadlines, kind: kind,
          conditions: conditions))
    }
    return .fetch(
      PipelineRequest(
        url: checked, profile: profile, lookup: lookup, deadlines: deadlines, kind: kind,
        conditions: conditions))
  }

  private func badSignature(_ signature: String?, url: String) -> Reply {
    let message =
      signature == nil
      ? "Unsigned URLs are not accepted by this server." : "The signature does not verify for this URL."
    return .error(AttachmentError(.badSignature, message), url: Redaction.redact(url))
  }

  /// A request's two deadlines: the fetch always runs to the server's, so that it is the same
  /// for every request sharing it; the answer is due by the request's own, the server's
  /// shortened by `X-Deadline-Ms`. A request that gives up early leaves the fetch to finish for
  /// the others (and for the cache).
  struct Deadlines: Sendable {
    /// The pipeline call's deadline.
    var fetch: ContinuousClock.Instant
    /// When the answer is due.
    var answer: ContinuousClock.Instant
  }

  /// The request's deadlines (see ``Deadlines``).
  private func requestDeadlines(_ header: String?) -> Result<Deadlines, AttachmentError> {
    let now = ContinuousClock.now
    let server = now + .milliseconds(Int64((configuration.deadlineSeconds * 1000).rounded()))
    guard let header else { return .success(Deadlines(fetch: server, answer: server)) }
    guard let milliseconds = Int64(header.trimmingPrefix(" ")), milliseconds > 0 else {
      return .failure(
        AttachmentError(.badRequest, "X-Deadline-Ms must be a positive whole number of milliseconds."))
    }
    return .success(
      Deadlines(fetch: server, answer: min(server, now + .milliseconds(min(milliseconds, 86_400_000)))))
  }

  /// Queues `reply` on `connection` and records it in `state`.
  private func queue(
    _ reply: Reply, on connection: OpaquePointer?, state: RequestState, mhd: MicroHTTPD
  ) -> MHD_Result {
    let reply = FallbackAnswer.answer(
      HiddenOrigin.answer(reply, route: state.route), route: state.route, image: configuration.fallbackImage,
      lifetimeSeconds: configuration.fallbackLifetimeSeconds)
    var headers = ExpiryLifetime.headers(reply.headers, route: state.route, now: Self.unixNow())
    headers.append(("X-Request-Id", state.facts.requestId))
    for field in configuration.responseHeaders.fields { headers.append((field.name, field.value)) }
    let early = if case .receiving = state.phase { true } else { false }  // before the request was complete
    if isDraining || reply.status == 503 || early { headers.append(("Connection", "close")) }
    let response: OpaquePointer?
    switch reply.body {
    case .empty:
      response = mhd.responseFromBuffer(0, nil, .RESPMEM_PERSISTENT)
    case .bytes(let bytes):
      response = bytes.withUnsafeBytes { raw in
        mhd.responseFromBuffer(
          raw.count, UnsafeMutableRawPointer(mutating: raw.baseAddress), .RESPMEM_MUST_COPY)
      }
    case .file(let descriptor, let offset, let length):
      response = mhd.responseFromFile(UInt64(length), descriptor, UInt64(offset))
      if response == nil { _ = close(descriptor) }
    }
    guard let response else { return .NO }
    defer { mhd.destroyResponse(response) }
    let before = watch.enter(.sending, connection).progress
    for (name, value) in headers { _ = mhd.addResponseHeader(response, name, value) }
    state.phase = .answered(
      RequestState.Queued(
        status: reply.status, outcome: reply.outcome, url: reply.url, bytes: reply.bodyBytes,
        fallbackFor: reply.fallbackFor,
        headBytes: DeliveredBytes.head(status: reply.status, headers: headers, length: reply.bodyBytes),
        before: before))
    return mhd.queueResponse(connection, UInt32(reply.status), response)
  }
}
