import AttachmentKit
import Foundation
import PosixLock

/// The Linux stand-in for `UNNotificationRequest`: an identifier and the original content.
public struct NotificationRequest: Sendable {
  /// The request identifier.
  public var identifier: String
  /// The content iOS built from the payload.
  public var content: NotificationContent

  /// Makes a request.
  public init(identifier: String, content: NotificationContent) {
    self.identifier = identifier
    self.content = content
  }
}

/// What the extension needs besides the request: where the cache is, which keys hold
/// attachments, the decryption key, and until when fetching may go on.
public struct ServiceConfiguration: Sendable {
  /// The attachment pipeline's settings (cache directory, limits).
  public var pipeline: PipelineConfiguration
  /// Which payload keys hold attachment URLs.
  public var locator = AttachmentLocator()
  /// The payload key of the encrypted alert.
  public var encryptedField = "encrypted_data"
  /// The key for ``encryptedField``; without one an encrypted payload keeps its original text.
  public var key: DecryptionKey?
  /// The app's localized strings for `loc-key` alerts; without them every key is shown as is.
  public var localization: LocalizationSource?
  /// How many attachments are fetched at once (default 4): a payload can name many URLs, and
  /// each open fetch holds a connection and memory the extension has little of.
  public var maximumConcurrentFetches = 4
  /// How many attachments one payload may have (default 10); the rest are skipped and traced.
  public var maximumAttachments = 10
  /// Where delivered attachment files are copied.
  public var staging: AttachmentStaging
  /// The bundled image delivered as the attachment when the payload asked for attachments and
  /// none could be made, neither from its URLs nor from its `fallback-urls` (``PayloadFallbacks``):
  /// validated once, at start, and staged with the first attachment's fetch; added only by the
  /// delivery itself, so never after `serviceExtensionTimeWillExpire`. Default: none.
  public var fallbackImage: FallbackImage?
  /// The absolute deadline of every fetch: a backstop, since
  /// ``NotificationService/serviceExtensionTimeWillExpire()`` cancels what is still running.
  /// The runner uses the end of the budget; in iOS, about 28 s after `didReceive`.
  public var fetchDeadline: ContinuousClock.Instant

  /// Makes a configuration with the default keys and no decryption key.
  public init(
    pipeline: PipelineConfiguration, staging: AttachmentStaging, fetchDeadline: ContinuousClock.Instant
  ) {
    self.pipeline = pipeline
    self.staging = staging
    self.fetchDeadline = fetchDeadline
  }
}

/// What the host (iOS, or ``ExtensionHost`` here) calls on a Notification Service Extension:
/// the two overrides of `UNNotificationServiceExtension`.
public protocol NotificationServiceExtension: Sendable {
  /// Starts the work for `request`; `contentHandler` must receive content exactly once.
  func didReceive(
    _ request: NotificationRequest,
    withContentHandler contentHandler: @escaping @Sendable (NotificationContent) -> Void)
  /// Called shortly before the budget ends: deliver the best attempt now.
  func serviceExtensionTimeWillExpire()
  /// Returns once the work has wound down after delivery, or at `deadline`.
  func waitUntilIdle(deadline: ContinuousClock.Instant) async
}

/// The Linux stand-in for a `UNNotificationServiceExtension` subclass, done right.
///
/// - ``didReceive(_:withContentHandler:)`` keeps the handler and a *best attempt* (a copy of the
///   original content), then works in priority order: the critical steps first (localizing
///   `loc-key` alerts, then decrypting `encrypted_data` into the title, subtitle and body), then
///   the optional ones (the attachments, fetched in parallel through the `AttachmentPipeline`,
///   at most ``ServiceConfiguration/maximumConcurrentFetches`` at once). Each step that succeeds
///   improves the best attempt; each that fails leaves it as it was. When all are done the best
///   attempt is delivered.
/// - ``serviceExtensionTimeWillExpire()`` delivers the best attempt as it stands — whatever is
///   done by then — and cancels the rest.
/// - When the payload asked for attachments and none was made by the delivery (neither its URLs
///   nor the first one's `fallback-urls`, see ``PayloadFallbacks``), the delivery carries the
///   bundled ``ServiceConfiguration/fallbackImage`` instead, and the payload's `fallback-body`
///   replaces the body; both only at the delivery, so never after time-will-expire.
///
/// The content handler is called exactly once, whichever comes first, and on every path: a
/// failure only means less was improved, never that nothing is delivered.
public final class NotificationService: NotificationServiceExtension {
  /// The `contentHandler` iOS passes to `didReceive`.
  public typealias ContentHandler = @Sendable (NotificationContent) -> Void

  /// Everything that changes, behind one lock: the handler (`nil` once delivered), the best
  /// attempt, the attachments ready so far by payload position, the open fetch steps, the work.
  private struct State {
    var contentHandler: ContentHandler?
    var bestAttempt: NotificationContent?
    var staged: [Int: DeliveredAttachment] = [:]
    var openFetches: [Int: (handle: Trace.Handle, url: String)] = [:]
    var work: Task<Void, Never>?
    var expired = false
    /// Whether the payload asked for at least one attachment.
    var attempted = false
    /// The fallback image, staged in the notification's directory, ready to be delivered.
    var fallbackImage: DeliveredAttachment?
    /// The payload's `fallback-body`.
    var fallbackBody: String?
    /// The pipeline the attachments were fetched through, once opened (its store writes are
    /// waited for after the delivery).
    var pipeline: AttachmentPipeline?
  }

  private let configuration: ServiceConfiguration
  private let trace: Trace
  private let state = Locked(State())
  private let idle: AsyncStream<Void>
  private let idleContinuation: AsyncStream<Void>.Continuation

  /// Makes the extension; `trace` records each step.
  public init(configuration: ServiceConfiguration, trace: Trace) {
    self.configuration = configuration
    self.trace = trace
    (idle, idleContinuation) = AsyncStream<Void>.makeStream()
  }

  // MARK: - UNNotificationServiceExtension

  /// Starts the work for `request`; `contentHandler` receives the content exactly once.
  public func didReceive(
    _ request: NotificationRequest, withContentHandler contentHandler: @escaping ContentHandler
  ) {
    state.withLock { state in
      state.contentHandler = contentHandler
      state.bestAttempt = request.content
    }
    let work = Task { [self] in
      await process(request)
      deliver(because: "all steps done")
      await finishStoreWrites()
      idleContinuation.finish()
    }
    let expired = state.withLock { state in
      state.work = work
      return state.expired
    }
    if expired { work.cancel() }
  }

  /// Delivers the best attempt now and cancels the work still running.
  public func serviceExtensionTimeWillExpire() {
    let (work, open) = state.withLock { state in
      state.expired = true
      return (state.work, state.openFetches)
    }
    for (handle, url) in open.values {
      trace.end(handle, .cancelled, detail: "time will expire: delivered without it (\(url))")
    }
    deliver(because: "time will expire: best attempt")
    work?.cancel()
  }

  /// Waits until the cancelled or finished work has wound down, or until `deadline`.
  public func waitUntilIdle(deadline: ContinuousClock.Instant) async {
    guard state.withLock({ $0.work != nil }) else { return }
    let idle = idle
    await withTaskGroup(of: Void.self) { group in
      group.addTask {
        for await _ in idle {}
      }
      group.addTask {
        try? await Task.sleep(until: deadline, clock: .continuous)
      }
      await group.next()
      group.cancelAll()
    }
  }

  // MARK: - Delivery

  /// Calls the content handler with the best attempt, the first time only; with the fallback
  /// image and `fallback-body` when attachments were asked for and none was made.
  private func deliver(because reason: String) {
    let taken = state.withLock { state -> (ContentHandler, NotificationContent, Fallen)? in
      guard let handler = state.contentHandler, var content = state.bestAttempt else { return nil }
      state.contentHandler = nil
      var fallen = Fallen(unusedImage: state.fallbackImage)
      if state.attempted && state.staged.isEmpty {
        if let image = state.fallbackImage {
          content.attachments = [image]
          fallen.image = image
          fallen.unusedImage = nil
        }
        if let body = state.fallbackBody {
          content.body = body
          fallen.body = true
        }
      }
      return (handler, content, fallen)
    }
    guard let (handler, content, fallen) = taken else { return }
    if let unused = fallen.unusedImage { try? FileManager.default.removeItem(atPath: unused.path) }
    if let image = fallen.image {
      trace.note(
        "fallback image", .ok, detail: "no attachment could be made: the bundled \(image.typeHint) delivered")
    }
    if fallen.body {
      trace.note(
        "fallback body", .ok, detail: "no attachment could be made: the body is \(PayloadFallbacks.bodyKey)")
    }
    let count = content.attachments.count
    trace.note("deliver", .event, detail: "\(reason): \(count) attachment\(count == 1 ? "" : "s")")
    handler(content)
  }

  /// What a delivery took from the fallbacks.
  private struct Fallen {
    /// The fallback image staged but not delivered (its file is removed).
    var unusedImage: DeliveredAttachment?
    /// The fallback image delivered.
    var image: DeliveredAttachment?
    /// Whether `fallback-body` replaced the body.
    var body = false
  }

  /// Changes the best attempt (nothing changes once it has been delivered).
  private func improve(_ change: (inout NotificationContent) -> Void) {
    state.withLock { state in
      guard state.contentHandler != nil, var content = state.bestAttempt else { return }
      change(&content)
      state.bestAttempt = content
    }
  }

  // MARK: - The work, in priority order

  /// Runs the critical steps, then the optional ones.
  private func process(_ request: NotificationRequest) async {
    let userInfo = request.content.userInfo
    localize(NotificationPayload(userInfo: userInfo).localization)
    decrypt(userInfo)
    if Task.isCancelled { return }
    await fetchAttachments(userInfo)
  }

  /// The first critical step: resolves `loc-key` alerts into the title, subtitle and body. A
  /// missing or bad strings file, or a missing key, shows the key itself (as iOS does) and is
  /// traced; the notification goes on either way.
  private func localize(_ localization: AlertLocalization) {
    guard
      let resolution = AlertLocalizer.localize(
        localization, source: configuration.localization, trace: trace)
    else { return }
    improve { resolution.apply(to: &$0) }
  }

  /// The second critical step: replaces the text with the decrypted `encrypted_data`, or keeps the
  /// original text when anything about it fails.
  private func decrypt(_ userInfo: [String: JSONValue]) {
    let name = configuration.encryptedField
    guard let field = userInfo[name] else {
      trace.note("decrypt", .skipped, detail: "no \(name) field")
      return
    }
    let step = trace.begin("decrypt")
    guard let text = field.stringValue else {
      trace.end(
        step, .failed, detail: "\(name) is \(field.kindDescription), not a string: original text kept")
      return
    }
    guard let key = configuration.key else {
      trace.end(step, .failed, detail: "no key (--key-file): original text kept")
      return
    }
    do {
      let alert = try DecryptedAlert(plaintext: Decryptor.open(text, key: key))
      improve { alert.apply(to: &$0) }
      trace.end(step, .ok, detail: "AES-256-GCM: replaced " + alert.replacedFields.joined(separator: ", "))
    } catch {
      trace.end(step, .failed, detail: "\(error): original text kept")
    }
  }

  /// The optional steps: the first ``ServiceConfiguration/maximumAttachments`` attachments,
  /// fetched in parallel, at most ``ServiceConfiguration/maximumConcurrentFetches`` at once.
  private func fetchAttachments(_ userInfo: [String: JSONValue]) async {
    let findings = configuration.locator.references(in: userInfo)
    let fallbacks = PayloadFallbacks(userInfo: userInfo)
    for problem in findings.problems + fallbacks.problems {
      trace.note("payload field", .failed, detail: problem)
    }
    for duplicate in findings.duplicates {
      trace.note("attachment", .skipped, detail: duplicate)
    }
    guard !findings.references.isEmpty else {
      let keys = configuration.locator.keys.joined(separator: ", ")
      trace.note("attachments", .skipped, detail: "no attachment URL under \(keys)")
      return
    }
    let limit = max(configuration.maximumAttachments, 0)
    let references = Array(findings.references.prefix(limit))
    let skipped = findings.references.dropFirst(limit)
    if let first = skipped.first {
      trace.note(
        "attachments over limit", .skipped,
        detail: "\(skipped.count) of \(findings.references.count) skipped: at most \(limit) a payload "
          + "(--max-attachments); the first skipped is \(first.identifier) "
          + "(\(Redaction.redact(first.url)))")
    }
    guard !references.isEmpty else { return }
    state.withLock { state in
      state.attempted = true
      state.fallbackBody = fallbacks.body
    }
    let opening = trace.begin("open cache")
    let pipeline: AttachmentPipeline
    do {
      pipeline = try AttachmentPipeline(configuration: configuration.pipeline)
    } catch {
      trace.end(opening, .failed, detail: "\(error): delivered without attachments")
      return
    }
    trace.end(opening, .ok, detail: configuration.pipeline.cache.directory)
    state.withLock { $0.pipeline = pipeline }
    let staging = trace.begin("delivery directory")
    let directory: String
    do {
      directory = try configuration.staging.makeNotificationDirectory()
    } catch {
      trace.end(staging, .failed, detail: "\(error.localizedDescription): delivered without attachments")
      return
    }
    trace.end(staging, .ok, detail: directory)
    stageFallbackImage(in: directory)
    let width = max(configuration.maximumConcurrentFetches, 1)
    let started = await withTaskGroup(of: Void.self) { group in
      var queue = references.enumerated().makeIterator()
      var started = 0
      while let (position, reference) = queue.next() {
        if started >= width { await group.next() }
        if Task.isCancelled { break }
        // The payload's alternatives stand in for its first attachment only.
        let alternatives = position == 0 ? fallbacks.urls : []
        group.addTask {
          await self.fetch(
            reference, alternatives: alternatives, position: position, pipeline: pipeline,
            directory: directory)
        }
        started += 1
      }
      await group.waitForAll()
      return started
    }
    if started < references.count {
      trace.note(
        "attachments not started", .cancelled,
        detail: "\(references.count - started) of \(references.count) still queued at time will expire")
    }
  }

  /// After the delivery: waits (never past the fetches' deadline, nor past time-will-expire)
  /// for the store writes of what this run fetched, so that the fleet has them when the
  /// process ends, and traces what the store did; nothing without a store.
  private func finishStoreWrites() async {
    guard let pipeline = state.withLock({ $0.pipeline }), pipeline.storeCounters != nil else { return }
    let step = trace.begin("store")
    let left = configuration.fetchDeadline - ContinuousClock.now
    let done = await pipeline.finishStoreWrites(timeout: max(left, .zero))
    guard let counters = pipeline.storeCounters else {
      trace.end(step, .ok, detail: "no store")
      return
    }
    var parts = [
      "\(counters.hits) hit(s)", "\(counters.misses) miss(es)", "\(counters.writes) write(s)",
    ]
    if counters.readFailures > 0 { parts.append("\(counters.readFailures) read failure(s)") }
    if counters.corrupt > 0 { parts.append("\(counters.corrupt) corrupt object(s), not used") }
    if counters.writeFailures > 0 { parts.append("\(counters.writeFailures) failed write attempt(s)") }
    if counters.writesDropped > 0 { parts.append("\(counters.writesDropped) write(s) dropped") }
    let trouble = counters.readFailures + counters.writesDropped > 0 || !done
    if !done { parts.append("writes still pending at the deadline") }
    trace.end(step, trouble ? .failed : .ok, detail: parts.joined(separator: ", "))
  }

  /// Copies the bundled fallback image into the notification's directory, ready for a delivery
  /// that has no other attachment (``deliver(because:)``); a failure is traced and leaves none.
  private func stageFallbackImage(in directory: String) {
    guard let image = configuration.fallbackImage else { return }
    do {
      // Position 0: every attachment of the payload is numbered from 1.
      let path = try AttachmentStaging.stage(
        bytes: image.bytes, position: 0, identifier: "fallback-image", fileExtension: image.fileExtension,
        in: directory)
      let staged = DeliveredAttachment(
        identifier: "fallback-image", url: URL(fileURLWithPath: path).absoluteString, typeHint: image.uti,
        source: "fallback-image")
      // Delivered meanwhile (time will expire came first): the copy is of no use.
      let delivered = state.withLock { state in
        state.fallbackImage = staged
        return state.contentHandler == nil
      }
      if delivered { try? FileManager.default.removeItem(atPath: path) }
    } catch {
      trace.note("fallback image", .failed, detail: "cannot copy the file: \(error.localizedDescription)")
    }
  }

  /// Fetches one attachment from its URL, then from each of `alternatives` in order while the
  /// ones before have failed and the work goes on (each with what is left of the budget: the
  /// fetches share ``ServiceConfiguration/fetchDeadline``, and time-will-expire cancels them).
  private func fetch(
    _ reference: AttachmentReference, alternatives: [String], position: Int, pipeline: AttachmentPipeline,
    directory: String
  ) async {
    let sources =
      [(url: reference.url, label: String?.none)]
      + alternatives.enumerated().map { (url: $1, label: "\(PayloadFallbacks.urlsKey)[\($0)]") }
    for (index, source) in sources.enumerated() {
      if index > 0 && Task.isCancelled {
        let untried = sources[index...].compactMap(\.label).joined(separator: ", ")
        trace.note(
          "attachment \(reference.identifier) alternatives", .cancelled, detail: "not tried: \(untried)")
        return
      }
      let attempt = await fetch(
        reference, url: source.url, source: source.label, position: position, pipeline: pipeline,
        directory: directory)
      if attempt != .failed { return }
    }
  }

  /// How one source of an attachment ended: attached, failed (the next may be tried), or
  /// stopped (cancelled, or fetched after the delivery: nothing more is tried).
  private enum Attempt {
    case attached
    case failed
    case stopped
  }

  /// Fetches one source of an attachment (its URL, or the alternative `source` names), copies
  /// it out of the cache and adds it to the best attempt.
  private func fetch(
    _ reference: AttachmentReference, url: String, source: String?, position: Int,
    pipeline: AttachmentPipeline,
    directory: String
  ) async -> Attempt {
    // The URL is parsed once: its redacted text names it in the trace, and the pipeline takes it as it is.
    let checked = Result { () throws(AttachmentError) in try AttachmentURL(url) }
    let redacted = (try? checked.get())?.redacted ?? Redaction.redact(url)
    let name = "attachment \(reference.identifier)" + (source.map { " \($0)" } ?? "")
    let step = trace.begin(name, detail: redacted)
    state.withLock { $0.openFetches[position] = (step, redacted) }
    defer { _ = state.withLock { $0.openFetches.removeValue(forKey: position) } }

    let attachment: Attachment
    do throws(AttachmentError) {
      attachment = try await pipeline.attachment(
        AttachmentRequest(
          url: checked.get(), deadline: configuration.fetchDeadline, thumbnail: reference.options))
    } catch {
      let outcome: StepOutcome = error.code == .cancelled ? .cancelled : .failed
      let detected = error.detected.map { " (the bytes are \($0))" } ?? ""
      trace.end(step, outcome, detail: "\(error.code.rawValue): \(error.message)\(detected) \(redacted)")
      return outcome == .cancelled ? .stopped : .failed
    }
    if Task.isCancelled {
      trace.end(
        step, .cancelled, detail: "fetched after delivery: not attached (\(redacted))")
      return .stopped
    }
    let path: String
    do {
      path = try AttachmentStaging.stage(
        attachment.path, position: position + 1, identifier: reference.identifier,
        fileExtension: attachment.validation.fileExtension, in: directory)
    } catch {
      trace.end(step, .failed, detail: "cannot copy the file: \(error.localizedDescription)")
      return .failed
    }
    let options = attachment.thumbnail
    for problem in attachment.thumbnailProblems {
      trace.note("attachment options \(reference.identifier)", .failed, detail: problem)
    }
    // What validation noted, and what libvips or FFmpeg logged while rescuing it.
    for warning in attachment.warnings {
      trace.note("attachment warning \(reference.identifier)", .event, detail: warning)
    }
    let delivered = DeliveredAttachment(
      identifier: reference.identifier, url: URL(fileURLWithPath: path).absoluteString,
      typeHint: attachment.uti, source: source, options: options)
    let added = state.withLock { state in
      guard state.contentHandler != nil, var content = state.bestAttempt else { return false }
      state.staged[position] = delivered
      content.attachments = state.staged.keys.sorted().compactMap { state.staged[$0] }
      state.bestAttempt = content
      return true
    }
    guard added else {
      try? FileManager.default.removeItem(atPath: path)
      trace.end(
        step, .cancelled, detail: "fetched after delivery: not attached (\(redacted))")
      return .stopped
    }
    let milliseconds = Double(attachment.totalMicroseconds) / 1000
    trace.end(
      step, .ok,
      detail: "\(attachment.uti), \(attachment.bytes) B from the \(attachment.source.rawValue) "
        + "in \(String(format: "%.1f", milliseconds)) ms"
        + (source.map { ", in place of the first URL, from \($0)" } ?? "")
        + (options.summary.map { "; options: " + $0 } ?? ""))
    return .attached
  }
}
