import PosixLock

/// What was delivered, by which path, and when.
public struct Delivery: Sendable {
  /// Which path delivered the content.
  public enum Route: String, Sendable, CustomStringConvertible {
    /// No `mutable-content: 1`: iOS shows the content as sent and never launches the extension.
    case unchanged
    /// The extension finished its work and called the content handler.
    case finished
    /// `serviceExtensionTimeWillExpire` was called and the extension delivered its best attempt.
    case timeWillExpire
    /// The budget ran out with nothing delivered, so the system showed the original content
    /// (what iOS does to an extension that never calls its handler).
    case systemFallback

    /// How the trace's last line says it.
    public var description: String {
      switch self {
      case .unchanged: "the system, unchanged (no mutable-content 1)"
      case .finished: "the extension, all steps done"
      case .timeWillExpire: "the extension's best attempt at time-will-expire"
      case .systemFallback: "the system, with the original content (the extension did not deliver)"
      }
    }
  }

  /// The content shown.
  public var content: NotificationContent
  /// How it got there.
  public var route: Route
  /// When, counted from the runner's start.
  public var elapsed: Duration
  /// The trace as it stood at delivery.
  public var trace: [TraceStep]
}

/// Plays the part of iOS around a ``NotificationService``: launches it only for mutable
/// content, calls `serviceExtensionTimeWillExpire` at budget − margin, and shows the original
/// content itself if the budget runs out with nothing delivered.
public struct ExtensionHost: Sendable {
  /// The instant the budget counts from.
  public var start: ContinuousClock.Instant
  /// The whole time the extension has (iOS: about 30 s).
  public var budget: Duration
  /// How long before the end of the budget `serviceExtensionTimeWillExpire` is called.
  public var expireMargin: Duration
  /// The app's strings, with which iOS localizes a `loc-key` alert it shows without running
  /// the extension (no `mutable-content: 1`); the extension localizes its own.
  public var localization: LocalizationSource?

  /// Makes a host whose budget counts from `start`.
  public init(start: ContinuousClock.Instant, budget: Duration, expireMargin: Duration) {
    self.start = start
    self.budget = budget
    self.expireMargin = expireMargin
  }

  /// When `serviceExtensionTimeWillExpire` is called.
  public var expiry: ContinuousClock.Instant { start + budget - expireMargin }
  /// The end of the budget: nothing is delivered after it.
  public var end: ContinuousClock.Instant { start + budget }

  /// Delivers the notification of `payload`: at once without mutable content (localized, as
  /// iOS shows it, but otherwise unchanged), otherwise through `service`, within the budget in
  /// every case.
  public func deliver(
    _ payload: NotificationPayload, to service: some NotificationServiceExtension, trace: Trace
  ) async -> Delivery {
    let request = NotificationRequest(identifier: "runner", content: payload.originalContent)
    guard payload.isMutable else {
      var content = request.content
      AlertLocalizer.localize(payload.localization, source: localization, trace: trace)?.apply(to: &content)
      trace.note("deliver", .event, detail: "no mutable-content 1: delivered unchanged, nothing fetched")
      return Delivery(content: content, route: .unchanged, elapsed: .now - start, trace: trace.snapshot)
    }
    let gate = DeliveryGate(start: start, trace: trace)
    service.didReceive(request) { content in gate.offer(content, fromSystem: false) }
    let (expiry, end) = (expiry, end)
    let timers = Task {
      try? await Task.sleep(until: expiry, clock: .continuous)
      if Task.isCancelled { return }
      gate.markExpiring()
      trace.note("time will expire", .event, detail: "budget − margin reached")
      service.serviceExtensionTimeWillExpire()
      try? await Task.sleep(until: end, clock: .continuous)
      if Task.isCancelled { return }
      trace.note("budget over", .event, detail: "nothing delivered: the system shows the original")
      gate.offer(request.content, fromSystem: true)
    }
    let delivery = await gate.first()
    timers.cancel()
    return delivery
      ?? Delivery(
        content: request.content, route: .systemFallback, elapsed: .now - start, trace: trace.snapshot)
  }
}

/// Lets the first content through, once, and hands it to the waiting host.
final class DeliveryGate: Sendable {
  /// Whether something was delivered, and whether time-will-expire has been called.
  private struct State {
    var delivered = false
    var expiring = false
  }

  private let start: ContinuousClock.Instant
  private let trace: Trace
  private let state = Locked(State())
  private let stream: AsyncStream<Delivery>
  private let continuation: AsyncStream<Delivery>.Continuation

  /// Makes a gate; times are counted from `start`.
  init(start: ContinuousClock.Instant, trace: Trace) {
    self.start = start
    self.trace = trace
    (stream, continuation) = AsyncStream<Delivery>.makeStream(bufferingPolicy: .bufferingOldest(1))
  }

  /// Records that `serviceExtensionTimeWillExpire` is being called.
  func markExpiring() {
    state.withLock { $0.expiring = true }
  }

  /// Delivers `content` unless something was delivered already.
  func offer(_ content: NotificationContent, fromSystem: Bool) {
    let route = state.withLock { state -> Delivery.Route? in
      guard !state.delivered else { return nil }
      state.delivered = true
      if fromSystem { return .systemFallback }
      return state.expiring ? .timeWillExpire : .finished
    }
    guard let route else { return }
    continuation.yield(Delivery(content: content, route: route, elapsed: .now - start, trace: trace.snapshot))
    continuation.finish()
  }

  /// The delivery, when it comes; `nil` only if the waiting task is cancelled.
  func first() async -> Delivery? {
    for await delivery in stream { return delivery }
    return nil
  }
}
