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

  static let refusedWebP = AttachmentError(.unsupportedType, "webp", detected: "image/webp")
  static let accepted = Result<Validation, AttachmentError>.success(entry().record.validation)

  @Test("a plain miss: download, check, publish, answer")
  func plainMiss() {
    var machine = Self.machine()
    #expect(machine.start() == .download(ifNoneMatch: nil, ifModifiedSince: nil))
    #expect(machine.state == .downloading(conditional: false))
    #expect(machine.downloaded(notModified: false, hasBody: true) == .check)
    #expect(machine.checked(Self.accepted, evidence: RescueEvidence(bytes: 756), stop: nil) == .publish)
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

  @Test("a refusal goes to the first rescuer that undoes it, judged from the evidence")
  func refusalToRescue() {
    var machine = Self.machine(rescuers: [ImageRescuer()])
    _ = machine.start()
    _ = machine.downloaded(notModified: false, hasBody: true)
    let evidence = RescueEvidence(refusal: Self.refusedWebP, bytes: 310)
    #expect(
      machine.checked(.failure(Self.refusedWebP), evidence: evidence, stop: nil)
        == .rescue(rescuer: "image", refusal: Self.refusedWebP))
    #expect(machine.state == .rescuing)
    #expect(machine.rescued(Self.accepted, stop: nil) == .publish)

    // An image over its byte limit is rescued; anything else over it is not.
    let tooLarge = AttachmentError(.tooLarge, "big")
    for (category, rescued) in [(MediaType.Category.image, true), (.video, false)] {
      var sized = Self.machine(rescuers: [ImageRescuer()])
      _ = sized.start()
      _ = sized.downloaded(notModified: false, hasBody: true)
      let action = sized.checked(
        .failure(tooLarge), evidence: RescueEvidence(category: category, bytes: 20_000_000), stop: nil)
      #expect((action == .rescue(rescuer: "image", refusal: tooLarge)) == rescued, "\(category)")
    }
  }

  @Test("no rescuer, a refusal none undoes, or a stop: the refusal is the answer")
  func refusalStands() {
    let html = AttachmentError(.unsupportedType, "html", detected: "text/html")
    for (rescuers, refusal, stop) in [
      ([], Self.refusedWebP, nil), ([ImageRescuer()], html, nil),
      ([ImageRescuer()], Self.refusedWebP, ProbeStop.deadline),
    ] as [([any Rescuer], AttachmentError, ProbeStop?)] {
      var machine = Self.machine(rescuers: rescuers)
      _ = machine.start()
      _ = machine.downloaded(notModified: false, hasBody: true)
      #expect(
        machine.checked(.failure(refusal), evidence: RescueEvidence(bytes: 9), stop: stop) == .fail(refusal))
      #expect(machine.state == .finished)
    }
  }

  @Test("a file checked after the deadline or a cancellation is not published")
  func stopBeforePublishing() {
    for (stop, code) in [
      (ProbeStop.deadline, AttachmentError.Code.deadlineExceeded), (.cancelled, .cancelled),
    ] {
      var machine = Self.machine()
      _ = machine.start()
      _ = machine.downloaded(notModified: false, hasBody: true)
      guard
        case .fail(let error) = machine.checked(Self.accepted, evidence: RescueEvidence(bytes: 1), stop: stop)
      else {
        Issue.record("published after \(stop)")
        continue
      }
      #expect(error.code == code)
    }
    // The same after a rescue.
    var rescuing = Self.machine(rescuers: [ImageRescuer()])
    _ = rescuing.start()
    _ = rescuing.downloaded(notModified: false, hasBody: true)
    _ = rescuing.checked(.failure(Self.refusedWebP), evidence: RescueEvidence(bytes: 310), stop: nil)
    guard case .fail(let error) = rescuing.rescued(Self.accepted, stop: .deadline) else {
      Issue.record("a rescued file was published after the deadline")
      return
    }
    #expect(error.code == .deadlineExceeded)
  }

  @Test("a failed rescue or publish fails the miss with its error")
  func laterFailures() {
    let notRescued = AttachmentError(.unsupportedType, "Not rescued: no loader", detected: "image/webp")
    var rescuing = Self.machine(rescuers: [ImageRescuer()])
    _ = rescuing.start()
    _ = rescuing.downloaded(notModified: false, hasBody: true)
    _ = rescuing.checked(.failure(Self.refusedWebP), evidence: RescueEvidence(bytes: 310), stop: nil)
    #expect(rescuing.rescued(.failure(notRescued), stop: nil) == .fail(notRescued))

    let disk = AttachmentError(.ioError, "disk full")
    var publishing = Self.machine()
    _ = publishing.start()
    _ = publishing.downloaded(notModified: false, hasBody: true)
    _ = publishing.checked(Self.accepted, evidence: RescueEvidence(bytes: 1), stop: nil)
    #expect(publishing.published(.failure(disk)) == .fail(disk))
    #expect(publishing.state == .finished)
  }

  @Test("an accepted movie that would play silent is improved; a failed improvement delivers the original")
  func improvement() {
    let silent = Validation(
      type: .mp4, detectedMIME: nil, bytes: 1000, sha256: String(repeating: "b", count: 64), width: 160,
      height: 120, frames: nil, durationSeconds: 1, codecs: ["avc1.64000A", "dtsc"], warnings: ["dts"])
    for succeeds in [true, false] {
      var machine = Self.machine(rescuers: [ImageRescuer(), MediaRescuer()])
      _ = machine.start()
      _ = machine.downloaded(notModified: false, hasBody: true)
      let action = machine.checked(.success(silent), evidence: RescueEvidence(bytes: 1000), stop: nil)
      guard case .improve(let rescuer, let refusal) = action else {
        Issue.record("a silent movie was not improved: \(action)")
        return
      }
      #expect(rescuer == "media" && refusal.code == .unsupportedCodec)
      #expect(machine.state == .improving)
      let result: Result<Validation, AttachmentError> = succeeds ? Self.accepted : .failure(refusal)
      #expect(machine.rescued(result, stop: nil) == .publish)
    }
    // Nothing to improve: with sound, or without the media rescuer; and never once stopping.
    var playing = silent
    playing.codecs = ["avc1.64000A", "mp4a.40.2"]
    var machine = Self.machine(rescuers: [MediaRescuer()])
    _ = machine.start()
    _ = machine.downloaded(notModified: false, hasBody: true)
    #expect(machine.checked(.success(playing), evidence: RescueEvidence(bytes: 1000), stop: nil) == .publish)
    var without = Self.machine(rescuers: [ImageRescuer()])
    _ = without.start()
    _ = without.downloaded(notModified: false, hasBody: true)
    #expect(without.checked(.success(silent), evidence: RescueEvidence(bytes: 1000), stop: nil) == .publish)
    var stopping = Self.machine(rescuers: [MediaRescuer()])
    _ = stopping.start()
    _ = stopping.downloaded(notModified: false, hasBody: true)
    guard
      case .fail = stopping.checked(.success(silent), evidence: RescueEvidence(bytes: 1000), stop: .deadline)
    else {
      Issue.record("a stopping miss was improved")
      return
    }
  }
}
