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
    guard let mhd = MicroHTTPD.shared else { return .NO }
    guard let existing = slot.pointee else {
      // The headers have arrived. Answer only what needs no more (a refusal, with the connection
      // closed); otherwise wait for the call that says the request is complete: an answer
      // queued before that cannot keep the connection alive.
      let methodName = method.map { String(cString: $0) } ?? ""
      let route = Route(path: url.map { String(cString: $0) } ?? "")
      let state = RequestState(method: methodName, route: route)
      slot.pointee = Unmanaged.passRetained(state).toOpaque()
      metrics.begin()
      if let refusal = earlyRefusal(method: methodName, connection: connection, mhd: mhd) {
        return queue(refusal, on: connection, state: state, mhd: mhd)
      }
      return .YES
    }
    let state = Unmanaged<RequestState>.fromOpaque(existing).takeUnretainedValue()
    if let uploadSize, uploadSize.pointee > 0 {
      uploadSize.pointee = 0
      return .YES
    }
    switch state.phase {
    case .answered: return .YES
    case .routed:
      // Resumed: the task left its answer.
      guard let reply = state.pending.withLock({ $0.take() }) else { return .YES }
      return queue(reply, on: connection, state: state, mhd: mhd)
    case .receiving:
      state.phase = .routed
    }
    switch start(route: state.route, connection: connection, mhd: mhd) {
    case .reply(let reply):
      return queue(reply, on: connection, state: state, mhd: mhd)
    case .fetch(let request):
      // Admission, the hit memo and the pipeline's single flight share one key: the normalized URL.
      guard admission.enter(request.url.normalized) else {
        return queue(
          .error(AttachmentError(.overloaded, "Too many upstream fetches at once; retry later.")),
          on: connection,
          state: state, mhd: mhd)
      }
      mhd.suspendConnection(connection)
      let handle = ConnectionHandle(pointer: connection)
      Task {
        let reply = await self.answer(request)
        state.pending.withLock { $0 = reply }
        mhd.resumeConnection(handle.pointer)
      }
      return .YES
    }
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

  /// libmicrohttpd's completion notice: the answer was sent, or the connection ended.
  func completed(
    slot: UnsafeMutablePointer<UnsafeMutableRawPointer?>?, termination: MHD_RequestTerminationCode
  ) {
    guard let slot, let opaque = slot.pointee else { return }
    slot.pointee = nil
    let state = Unmanaged<RequestState>.fromOpaque(opaque).takeRetainedValue()
    let seconds = (ContinuousClock.now - state.start).inSeconds
    let queued = state.queued
    if configuration.accessLog {
      AccessLog.write(
        method: state.method, route: state.route.label, url: queued.url, status: queued.status,
        outcome: queued.outcome, bytes: queued.bytes, seconds: seconds,
        completed: termination == .REQUEST_TERMINATED_COMPLETED_OK)
    }
    let sent = termination == .REQUEST_TERMINATED_COMPLETED_OK && state.method != "HEAD" ? queued.bytes : 0
    metrics.end(
      route: state.route.label, outcome: queued.outcome, code: queued.status, seconds: seconds, bytes: sent)
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
    let lookup: Lookup
    let deadlines: Deadlines
    let kind: Kind
    let conditions: Conditions
  }

  /// Which answer a pipeline call ends in.
  enum Kind: Sendable {
    case file
    case info
  }

  private func start(route: Route, connection: OpaquePointer?, mhd: MicroHTTPD) -> Start {
    let url: String
    let kind: Kind
    switch route {
    case .health:
      return .reply(.text(200, "ok\n", contentType: "text/plain; charset=utf-8", outcome: "ok"))
    case .metrics:
      return .reply(metricsReply())
    case .ready:
      return .reply(readinessReply())
    case .notFound:
      return .reply(.error(AttachmentError(.notFound, "No such route.")))
    case .malformed(let message):
      return .reply(.error(AttachmentError(.badRequest, message)))
    case .attachment(let target, let signature):
      guard verify(signature, for: target) else { return .reply(badSignature(signature, url: target)) }
      (url, kind) = (target, .file)
    case .info(let target, let signature):
      guard verify(signature, for: target) else { return .reply(badSignature(signature, url: target)) }
      (url, kind) = (target, .info)
    }
    let checked: AttachmentURL
    do {
      checked = try AttachmentURL(url)
    } catch {
      return .reply(
        kind == .info
          ? infoReply(Redaction.redact(url), .failure(error)) : .error(error, url: Redaction.redact(url)))
    }
    let deadlines: Deadlines
    switch requestDeadlines(mhd.header(connection, "X-Deadline-Ms")) {
    case .success(let instants): deadlines = instants
    case .failure(let error): return .reply(.error(error, url: checked.redacted))
    }
    // The cheapest answer: a fresh cached copy, on this thread, with no task: remembered, or
    // from the request's one cache lookup (which the pipeline continues from on a miss).
    let key = checked.normalized
    let now = HitMemo.now()
    let conditions = Conditions(
      ifNoneMatch: mhd.header(connection, "If-None-Match"), range: mhd.header(connection, "Range"),
      ifRange: mhd.header(connection, "If-Range"))
    if kind == .file, let remembered = hitMemo.hit(key, now: now) {
      if let reply = FileReply.make(remembered, conditions: conditions, now: now) { return .reply(reply) }
      hitMemo.forget(key)
    }
    if let reply = rememberedReply(checked, kind: kind, now: now) { return .reply(reply) }
    let lookup = pipeline.lookup(checked)
    if kind == .file, case .hit(let hit) = lookup {
      hitMemo.remember(key, hit, now: now)
      if let reply = FileReply.make(hit, conditions: conditions, now: now) { return .reply(reply) }
      hitMemo.forget(key)
      // The file went away between the lookup and the open (a sweep): fetch it again.
      return .fetch(
        PipelineRequest(url: checked, lookup: .miss, deadlines: deadlines, kind: kind, conditions: conditions)
      )
    }
    return .fetch(
      PipelineRequest(url: checked, lookup: lookup, deadlines: deadlines, kind: kind, conditions: conditions))
  }

  private func verify(_ signature: String?, for url: String) -> Bool {
    guard let signature else { return configuration.acceptsUnsigned }
    return signer.verify(signature: signature, for: url)
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

  /// Runs the pipeline for the request (already admitted), continuing from its lookup, and
  /// turns the outcome into the answer.
  private func answer(_ request: PipelineRequest) async -> Reply {
    let (url, deadlines, conditions) = (request.url, request.deadlines, request.conditions)
    let key = url.normalized
    // The pipeline call holds the URL's admission until it ends, even past this answer.
    let work = Task { () -> Result<Attachment, AttachmentError> in
      let started = ContinuousClock.now
      let result: Result<Attachment, AttachmentError>
      do throws(AttachmentError) {
        result = .success(
          try await pipeline.attachment(for: url, after: request.lookup, deadline: deadlines.fetch))
      } catch {
        result = .failure(error)
      }
      countUpstream(result, key: key, seconds: (ContinuousClock.now - started).inSeconds)
      if case .failure(let error) = result {
        refusalMemo.remember(key, error, limits: pipeline.configuration.limits, now: HitMemo.now())
      }
      admission.leave(key)
      return result
    }
    let result = await Self.outcome(of: work, by: deadlines.answer, fetchDeadline: deadlines.fetch)
    switch (request.kind, result) {
    case (.info, _):
      return infoReply(url.redacted, result)
    case (.file, .failure(let error)):
      return errorReply(error, url: url, key: key)
    case (.file, .success(let attachment)):
      if let reply = FileReply.make(attachment, conditions: conditions) {
        // A no-store body is this answer's alone: once open, its name and its bytes in the
        // cache's count go (the open descriptor keeps reading it).
        pipeline.release(attachment)
        return reply
      }
      // The file went away between the answer and the open (a sweep): ask once more.
      if let again = try? await pipeline.attachment(for: url, deadline: deadlines.answer),
        let reply = FileReply.make(again, conditions: conditions)
      {
        return reply
      }
      return .error(AttachmentError(.ioError, "The cached file could not be opened."), url: url.redacted)
    }
  }

  /// The answer of `GET /v1/info/…`: the info record of the outcome, under its status.
  func infoReply(_ redacted: String, _ result: Result<Attachment, AttachmentError>) -> Reply {
    var reply = Reply.text(
      Self.status(of: result), infoRecord(redacted, result).text + "\n", contentType: "application/json",
      outcome: Self.outcome(of: result))
    reply.url = redacted
    return reply
  }

  /// The outcome of `work`, or `deadline_exceeded` at `deadline` if it has not ended by then
  /// (the work goes on).
  private static func outcome(
    of work: Task<Result<Attachment, AttachmentError>, Never>, by deadline: ContinuousClock.Instant,
    fetchDeadline: ContinuousClock.Instant
  ) async -> Result<Attachment, AttachmentError> {
    // With no earlier deadline of its own, the request waits for the pipeline's answer, which
    // comes by the same deadline.
    guard deadline < fetchDeadline else { return await work.value }
    return await withCheckedContinuation { continuation in
      let once = Locked<CheckedContinuation<Result<Attachment, AttachmentError>, Never>?>(continuation)
      let timer = Task {
        try? await Task.sleep(until: deadline, clock: .continuous)
        guard !Task.isCancelled else { return }
        once.withLock { $0.take() }?.resume(
          returning: .failure(
            AttachmentError(.deadlineExceeded, "The deadline passed before the attachment was ready.")))
      }
      Task {
        let result = await work.value
        timer.cancel()
        once.withLock { $0.take() }?.resume(returning: result)
      }
    }
  }

  private func countUpstream(_ result: Result<Attachment, AttachmentError>, key: String, seconds: Double) {
    let bytes: Int64
    switch result {
    case .success(let attachment) where attachment.source != .cache: bytes = attachment.bytesTransferred
    case .failure(let error) where [.rejection, .fetch].contains(error.kind): bytes = 0
    default: return
    }
    if admission.claimUpstreamCount(key) { metrics.upstream(bytes: bytes, seconds: seconds) }
  }

  private static func status(of result: Result<Attachment, AttachmentError>) -> Int {
    switch result {
    case .success: 200
    case .failure(let error): ErrorStatus.of(error)
    }
  }

  private static func outcome(of result: Result<Attachment, AttachmentError>) -> String {
    switch result {
    case .success(let attachment): attachment.source.rawValue
    case .failure(let error): error.code.rawValue
    }
  }

  /// Queues `reply` on `connection` and records it in `state`.
  private func queue(
    _ reply: Reply, on connection: OpaquePointer?, state: RequestState, mhd: MicroHTTPD
  ) -> MHD_Result {
    var headers = reply.headers
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
    for (name, value) in headers { _ = mhd.addResponseHeader(response, name, value) }
    state.phase = .answered(
      RequestState.Queued(
        status: reply.status, outcome: reply.outcome, url: reply.url, bytes: reply.bodyBytes))
    return mhd.queueResponse(connection, UInt32(reply.status), response)
  }
}
