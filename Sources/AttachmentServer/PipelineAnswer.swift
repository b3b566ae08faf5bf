import AttachmentKit
import PosixLock

extension AttachmentServer {
  /// Runs the pipeline for the request (already admitted), continuing from its lookup, and
  /// turns the outcome into the answer. While it waits, the client's socket (`clientSocket`,
  /// -1: none to watch) is watched: a client that hangs up stops waiting (``ClientWatch``).
  func answer(_ request: PipelineRequest, clientSocket: Int32 = -1) async -> Reply {
    let (url, deadlines, conditions) = (request.url, request.deadlines, request.conditions)
    let key = pipeline.callerKey(url)
    // The pipeline call holds the URL's admission until it ends, even past this answer.
    let id = admission.reserveID()
    let work = Task { () -> Result<Attachment, AttachmentError> in
      let started = ContinuousClock.now
      let result: Result<Attachment, AttachmentError>
      do throws(AttachmentError) {
        result = .success(
          try await pipeline.attachment(
            AttachmentRequest(url: url, deadline: deadlines.fetch, profile: request.profile),
            after: request.lookup))
      } catch {
        result = .failure(error)
      }
      countUpstream(result, key: key, seconds: (ContinuousClock.now - started).inSeconds)
      if case .failure(let error) = result {
        refusalMemo.remember(key, error, limits: pipeline.configuration.limits, now: HitMemo.now())
      }
      admission.leave(key, id: id)
      return result
    }
    admission.track(key, id: id, work: work)
    let watch = watchClient(clientSocket, key: key)
    var result = await Self.outcome(of: work, by: deadlines.answer, fetchDeadline: deadlines.fetch)
    watch.task.cancel()
    if !watch.stop() { admission.answered(key) }
    // Cut by the drain: a CDN should ask another instance.
    if isDraining, case .failure(let error) = result, error.code == .cancelled {
      result = .failure(AttachmentError(.overloaded, "The server is shutting down; retry."))
    }
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
      if let again = try? await pipeline.attachment(
        AttachmentRequest(url: url, deadline: deadlines.answer, profile: request.profile)),
        let reply = FileReply.make(again, conditions: conditions)
      {
        return reply
      }
      return .error(AttachmentError(.ioError, "The cached file could not be opened."), url: url.redacted)
    }
  }

  /// Watches `socket` every 100 ms until stopped; a hang-up abandons the request's place in
  /// `key`'s group. `stop()` ends the watch and says whether the client had hung up (then the
  /// request was counted as no longer waiting already).
  private func watchClient(
    _ socket: Int32, key: URLKey
  ) -> (task: Task<Void, Never>, stop: @Sendable () -> Bool) {
    // nil: watching; true: the client hung up; false: stopped first
    let hungUp = Locked<Bool?>(nil)
    let task = Task { [admission] in
      while !Task.isCancelled {
        try? await Task.sleep(for: .milliseconds(100))
        let abandoned = hungUp.withLock { state -> Bool in
          guard state == nil, !Task.isCancelled, ClientWatch.hasHungUp(socket) else { return false }
          state = true
          return true
        }
        if abandoned {
          admission.abandon(key)
          return
        }
      }
    }
    return (
      task,
      {
        hungUp.withLock { state in
          if state == nil { state = false }
          return state == true
        }
      }
    )
  }

  /// The answer of `GET /v1/info/…`: the info record of the outcome, under its status, without
  /// the server's file system path or local error text (``PublicError``).
  func infoReply(_ redacted: String, _ result: Result<Attachment, AttachmentError>) -> Reply {
    let result = result.mapError(PublicError.exposed)
    let record = PublicError.withoutPath(infoRecord(redacted, result))
    var reply = Reply.text(
      Self.status(of: result), record.text + "\n", contentType: "application/json",
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

  private func countUpstream(_ result: Result<Attachment, AttachmentError>, key: URLKey, seconds: Double) {
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
}
