import TestTraits
import Testing

@testable import AttachmentKit

/// Every transition of one miss, as values: no socket, file or clock. The end-to-end tests
/// (`PipelineTests`, `PipelineStageTests`, `RescuePipelineTests`) drive the same machine
/// through the real pipeline.
@Suite("The miss machine", .rescueTurn, .threadOfItsOwn)
struct MissMachineTests {
  /// A stored JPEG entry, from a public address, with the given validators.
  static func entry(etag: String? = "\"v1\"", lastModified: String? = nil, bytes: Int64 = 756) -> CacheEntry {
    let validation = Validation(
      type: .jpeg, detectedMIME: "image/jpeg", bytes: bytes, sha256: String(repeating: "a", count: 64),
      width: 64, height: 48, frames: nil, durationSeconds: nil, warnings: [])
    let record = CacheRecord(
      url: "http://x/a.jpg", validation: validation, peer: .public, etag: etag, lastModified: lastModified,
      date: nil, fetchedAt: 1, freshUntil: 2, lastAccess: 1)
    return CacheEntry(record: record, path: "/c/a.jpg", digest: "d")
  }

  /// A machine for a caller with default limits, `rescuers`, and stale-if-error as given.
  static func machine(
    stale: CacheEntry? = nil, useStaleOnError: Bool = false, rescuers: [any Rescuer] = [],
    configure: (inout PipelineConfiguration) -> Void = { _ in }
  ) -> MissMachine {
    var configuration = PipelineConfiguration(cacheDirectory: "/nonexistent")
    configuration.rescuers = rescuers
    configure(&configuration)
    let policy = HitPolicy(configuration: configuration, limits: EffectiveLimits(configuration))
    return MissMachine(stale: stale, policy: policy, useStaleOnError: useStaleOnError)
  }

  static let refusedWebP = Refusal(
    AttachmentError(.unsupportedType, "webp", detected: "image/webp"), facts: MediaFacts(bytes: 310))
  static let accepted = Result<Validation, AttachmentError>.success(entry().record.validation)
  static let checkedFine = Result<Validation, Refusal>.success(entry().record.validation)

  /// A rescuer the machine only asks (it never runs one): it undoes refusals of `reason`.
  struct Undoes: Rescuer {
    var name: String
    var reason: Refusal.Reason
    var maximumSourceBytes: Int64 { 1 << 20 }
    func canRescue(_ refusal: Refusal) -> Bool { refusal.reason == reason }
    func rescue(_ job: RescueJob) throws(AttachmentError) -> Rescue { throw job.refusal.error }
    func sourceRefusal(of provenance: Rescue) -> AttachmentError? { nil }
  }

  /// A machine with `rescuers` that has downloaded a body and is checking it.
  static func checking(rescuers: [any Rescuer]) -> MissMachine {
    var machine = Self.machine(rescuers: rescuers)
    _ = machine.start()
    _ = machine.downloaded(notModified: false, hasBody: true)
    return machine
  }

  @Test("a plain miss: download, check, publish, answer")
  func plainMiss() {
    var machine = Self.machine()
    #expect(machine.start() == .download(ifNoneMatch: nil, ifModifiedSince: nil))
    #expect(machine.state == .downloading(conditional: false))
    #expect(machine.downloaded(notModified: false, hasBody: true) == .check)
    #expect(machine.checked(Self.checkedFine) == .publish)
    #expect(machine.state == .publishing)
    #expect(machine.published(.success(())) == .answerPublished)
    #expect(machine.state == .finished)
  }

  @Test("a stale copy is revalidated with its ETag, else its Last-Modified")
  func conditionalDownload() {
    var tagged = Self.machine(
      stale: Self.entry(etag: "\"v1\"", lastModified: "Tue, 01 Dec 2026 10:00:00 GMT"))
    #expect(tagged.start() == .download(ifNoneMatch: "\"v1\"", ifModifiedSince: nil))
    #expect(tagged.state == .downloading(conditional: true))
    var dated = Self.machine(stale: Self.entry(etag: nil, lastModified: "Tue, 01 Dec 2026 10:00:00 GMT"))
    #expect(dated.start() == .download(ifNoneMatch: nil, ifModifiedSince: "Tue, 01 Dec 2026 10:00:00 GMT"))
  }

  @Test("a 304 refreshes the stale copy and answers revalidated; a refreshed copy the policy refuses fails")
  func notModified() {
    let stale = Self.entry()
    var machine = Self.machine(stale: stale)
    _ = machine.start()
    #expect(machine.downloaded(notModified: true, hasBody: false) == .refresh(stale))
    #expect(machine.state == .refreshing)
    #expect(
      machine.refreshed(.success(stale)) == .answerFromCache(stale, source: .revalidated, staleBecause: nil))

    var strict = Self.machine(stale: stale) { $0.limits.maximumImageBytes = 100 }
    _ = strict.start()
    _ = strict.downloaded(notModified: true, hasBody: false)
    guard case .fail(let error) = strict.refreshed(.success(stale)) else {
      Issue.record("a refused refresh was answered")
      return
    }
    #expect(error.code == .tooLarge)
  }

  @Test("a stale copy removed while it was revalidated is fetched again, unconditionally")
  func refreshFoundItGone() {
    var machine = Self.machine(stale: Self.entry())
    _ = machine.start()
    _ = machine.downloaded(notModified: true, hasBody: false)
    #expect(machine.refreshed(.success(nil)) == .download(ifNoneMatch: nil, ifModifiedSince: nil))
    #expect(machine.stale == nil)
    #expect(machine.state == .downloading(conditional: false))
    // and a 304 to that unconditional request is a protocol failure, not a refresh
    guard case .fail(let error) = machine.downloaded(notModified: true, hasBody: false) else {
      Issue.record("a 304 to an unconditional request was taken")
      return
    }
    #expect(error.code == .networkError)
  }

  @Test("a refresh that cannot be written fails with its error")
  func refreshFailed() {
    var machine = Self.machine(stale: Self.entry())
    _ = machine.start()
    _ = machine.downloaded(notModified: true, hasBody: false)
    let disk = AttachmentError(.ioError, "disk full")
    #expect(machine.refreshed(.failure(disk)) == .fail(disk))
  }

  @Test("stale-if-error: only a fetch failure, only when allowed, only a copy the policy serves")
  func staleIfError() {
    let stale = Self.entry()
    let down = AttachmentError(.connectFailed, "refused")
    var allowed = Self.machine(stale: stale, useStaleOnError: true)
    _ = allowed.start()
    #expect(allowed.downloadFailed(down) == .answerFromCache(stale, source: .cache, staleBecause: down))

    var notAllowed = Self.machine(stale: stale)
    _ = notAllowed.start()
    #expect(notAllowed.downloadFailed(down) == .fail(down))

    // The bytes refused, or the caller gone, is no network failure: no stale copy stands in.
    for error in [AttachmentError(.unsupportedType, "html"), AttachmentError.cancelledError()] {
      var machine = Self.machine(stale: stale, useStaleOnError: true)
      _ = machine.start()
      #expect(machine.downloadFailed(error) == .fail(error))
    }
    // A copy this caller's policy refuses never stands in either.
    var strict = Self.machine(stale: stale, useStaleOnError: true) { $0.limits.maximumImageBytes = 100 }
    _ = strict.start()
    #expect(strict.downloadFailed(down) == .fail(down))
    // Nor is there one without a stale copy.
    var fresh = Self.machine(useStaleOnError: true)
    _ = fresh.start()
    #expect(fresh.downloadFailed(down) == .fail(down))
  }

  @Test("a refusal goes to the first rescuer that undoes it, judged from the refusal's reason and facts")
  func refusalToRescue() {
    var machine = Self.checking(rescuers: [ImageRescuer()])
    #expect(
      machine.checked(.failure(Self.refusedWebP)) == .rescue(rescuer: "image", refusal: Self.refusedWebP))
    #expect(machine.state == .rescuing)
    #expect(machine.rescued(Self.accepted) == .publish)

    // An image over its byte limit is rescued; anything else over it is not.
    for (category, rescued) in [(MediaType.Category.image, true), (.video, false)] {
      let tooLarge = Refusal(
        AttachmentError(.tooLarge, "big"), category: category, facts: MediaFacts(bytes: 20_000_000))
      var sized = Self.checking(rescuers: [ImageRescuer()])
      let action = sized.checked(.failure(tooLarge))
      #expect((action == .rescue(rescuer: "image", refusal: tooLarge)) == rescued, "\(category)")
    }
  }

  @Test(
    "the rescuers are chosen once, in order: the next is tried when one fails, the first failure is the answer"
  )
  func fallbackOrder() {
    let first = Undoes(name: "first", reason: .unsupportedFormat)
    let skipped = Undoes(name: "skipped", reason: .tooLong)
    let second = Undoes(name: "second", reason: .unsupportedFormat)
    let failedFirst = AttachmentError(.unsupportedType, "webp Not rescued: first", detected: "image/webp")
    let failedSecond = AttachmentError(.unsupportedType, "webp Not rescued: second", detected: "image/webp")

    var machine = Self.checking(rescuers: [first, skipped, second])
    #expect(
      machine.checked(.failure(Self.refusedWebP)) == .rescue(rescuer: "first", refusal: Self.refusedWebP))
    #expect(machine.rescued(.failure(failedFirst)) == .rescue(rescuer: "second", refusal: Self.refusedWebP))
    #expect(machine.rescued(.failure(failedSecond)) == .fail(failedFirst))
    #expect(machine.state == .finished)

    // The second one's success is delivered.
    var rescued = Self.checking(rescuers: [first, second])
    _ = rescued.checked(.failure(Self.refusedWebP))
    _ = rescued.rescued(.failure(failedFirst))
    #expect(rescued.rescued(Self.accepted) == .publish)

    // A rescue that ran out of time, or whose caller left, ends the miss: no fallback.
    for code in [AttachmentError.Code.deadlineExceeded, .cancelled] {
      let stopped = AttachmentError(code, "stopped")
      var stopping = Self.checking(rescuers: [first, second])
      _ = stopping.checked(.failure(Self.refusedWebP))
      #expect(stopping.rescued(.failure(stopped)) == .fail(stopped))
    }

    // A verdict on the source itself ends it too: a bomb, or a worker the source crashed or
    // exhausted, is not handed to the next rescuer (the poster after the media rescue).
    let verdicts = [
      AttachmentError(.tooManyPixels, "A frame of the video declares a size over the rescue's budget"),
      AttachmentError(.tooComplex, "The file has 300 tracks"),
      // The worker's end, as the value the pool sets (the message is for people: the machine
      // reads only the value).
      Self.judged(.workerDied), Self.judged(.cpuExhausted), Self.judged(.memoryExhausted),
    ]
    for verdict in verdicts {
      var ending = Self.checking(rescuers: [first, second])
      _ = ending.checked(.failure(Self.refusedWebP))
      #expect(ending.rescued(.failure(verdict)) == .fail(verdict), "\(verdict)")
      #expect(ending.state == .finished)
    }
  }

  @Test("no rescuer, or a refusal none undoes: the refusal is the answer")
  func refusalStands() {
    let html = Refusal(
      AttachmentError(.unsupportedType, "html", detected: "text/html"), facts: MediaFacts(bytes: 9))
    for (rescuers, refusal) in [([], Self.refusedWebP), ([ImageRescuer()], html)]
      as [([any Rescuer], Refusal)]
    {
      var machine = Self.checking(rescuers: rescuers)
      #expect(machine.checked(.failure(refusal)) == .fail(refusal.error))
      #expect(machine.state == .finished)
    }
  }

  @Test("a stop is an event: after a check, a rescue or an improvement, nothing more is done")
  func stopIsAnEvent() {
    for (stop, code) in [
      (ProbeStop.deadline, AttachmentError.Code.deadlineExceeded), (.cancelled, .cancelled),
    ] {
      var checking = Self.checking(rescuers: [ImageRescuer()])
      guard case .fail(let error) = checking.stopped(stop) else {
        Issue.record("a checked file went on after \(stop)")
        continue
      }
      #expect(error.code == code)
      #expect(checking.state == .finished)

      var rescuing = Self.checking(rescuers: [ImageRescuer()])
      _ = rescuing.checked(.failure(Self.refusedWebP))
      guard case .fail(let afterRescue) = rescuing.stopped(stop) else {
        Issue.record("a rescued file went on after \(stop)")
        continue
      }
      #expect(afterRescue.code == code)
      #expect(code == .cancelled || afterRescue.message.contains("while the file was rescued"))

      var improving = Self.checking(rescuers: [MediaRescuer()])
      _ = improving.checked(.success(Self.silentMovie))
      #expect(improving.state == .improving)
      guard case .fail(let afterImproving) = improving.stopped(stop) else {
        Issue.record("an improved file went on after \(stop)")
        continue
      }
      #expect(afterImproving.code == code)
    }
  }

  @Test("a failed rescue or publish fails the miss with its error")
  func laterFailures() {
    let notRescued = AttachmentError(.unsupportedType, "Not rescued: no loader", detected: "image/webp")
    var rescuing = Self.checking(rescuers: [ImageRescuer()])
    _ = rescuing.checked(.failure(Self.refusedWebP))
    #expect(rescuing.rescued(.failure(notRescued)) == .fail(notRescued))

    let disk = AttachmentError(.ioError, "disk full")
    var publishing = Self.checking(rescuers: [])
    _ = publishing.checked(Self.checkedFine)
    #expect(publishing.published(.failure(disk)) == .fail(disk))
    #expect(publishing.state == .finished)
  }

  /// An H.264 movie whose only audio is DTS: accepted, it would play silent.
  static let silentMovie = Validation(
    type: .mp4, detectedMIME: nil, bytes: 1000, sha256: String(repeating: "b", count: 64), width: 160,
    height: 120, frames: nil, durationSeconds: 1, codecs: ["avc1.64000A", "dtsc"], warnings: ["dts"])

  @Test("an accepted movie that would play silent is improved; a failed improvement delivers the original")
  func improvement() {
    let silent = Self.silentMovie
    for succeeds in [true, false] {
      var machine = Self.checking(rescuers: [ImageRescuer(), MediaRescuer()])
      let action = machine.checked(.success(silent))
      guard case .improve(let rescuer, let refusal) = action else {
        Issue.record("a silent movie was not improved: \(action)")
        return
      }
      #expect(rescuer == "media" && refusal.reason == .silentAudio && refusal.facts.codecs == silent.codecs)
      #expect(machine.state == .improving)
      let result: Result<Validation, AttachmentError> = succeeds ? Self.accepted : .failure(refusal.error)
      #expect(machine.rescued(result) == .publish)
    }
    // Nothing to improve: with sound, or without the media rescuer.
    var playing = silent
    playing.codecs = ["avc1.64000A", "mp4a.40.2"]
    var machine = Self.checking(rescuers: [MediaRescuer()])
    #expect(machine.checked(.success(playing)) == .publish)
    var without = Self.checking(rescuers: [ImageRescuer()])
    #expect(without.checked(.success(silent)) == .publish)
    // An improvement stopped by the deadline is not published.
    var stopping = Self.checking(rescuers: [MediaRescuer()])
    _ = stopping.checked(.success(silent))
    let late = AttachmentError(.deadlineExceeded, "late")
    #expect(stopping.rescued(.failure(late)) == .fail(late))
  }
}

extension MissMachineTests {
  /// A rescue's failure whose worker's end judged the source, with a message that says nothing
  /// of it.
  static func judged(_ verdict: AttachmentError.SourceVerdict) -> AttachmentError {
    var error = AttachmentError(.unsupportedType, "Not rescued.")
    error.sourceVerdict = verdict
    return error
  }
}
