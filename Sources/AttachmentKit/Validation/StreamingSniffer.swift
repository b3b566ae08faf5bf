import PosixLock

/// Refuses a wrong download early: sniffs the first bytes as they stream in and stops the
/// transfer as soon as they cannot become an accepted attachment, or the body passes its
/// type's size limit.
///
/// It holds at most `SniffWindow.maximumBytes` of the body (an ID3v2 tag in front is skipped,
/// not kept). An MP4 whose `moov` lies in those bytes has its codecs judged there (see
/// `CodecTable`). The final word is still ``Validator/validate(file:sha256:deadline:)`` on the
/// complete file.
public final class StreamingSniffer: ResponseInspector {
  private struct State {
    var head: [UInt8] = []  // the first 10 bytes, for the ID3v2 header
    var tagLength: Int?  // known once `head` is full
    var window: [UInt8] = []  // bytes after the tag, up to the sniff window
    var category: MediaType.Category?
    var identified = false
    var declaredLength: Int64?
    /// The window size at which the bytes are judged next: the window doubles between
    /// judgements (4, 8, 16, 32, 64 KiB), so sniffing costs O(bytes), however small the chunks.
    var nextJudgement = MagicSniffer.windowBytes
    /// What libmagic said of the window's first 4 KiB (all it reads), once asked.
    var detected: String??
    /// How many times the window was judged (identification and classification).
    var judgements = 0
    /// What the window proved, once it did: handed to the validator so it does not judge again.
    var verdict: SniffVerdict?
  }

  private let limits: ValidationLimits
  private let state = Locked(State())
  private let tally: IdentificationTally?

  /// Makes a sniffer that enforces `limits` while bytes arrive. libmagic is loaded only if a
  /// body's first bytes are refused or cannot be told by the probes.
  public convenience init(limits: ValidationLimits = ValidationLimits()) {
    self.init(limits: limits, tally: nil)
  }

  /// A sniffer that counts each identification of the window in `tally`.
  init(limits: ValidationLimits, tally: IdentificationTally?) {
    self.limits = limits
    self.tally = tally
  }

  /// How many times the bytes were judged so far (for tests: it stays at most 5 per body).
  var judgements: Int { state.withLock { $0.judgements } }

  /// What the first bytes proved (their format, and libmagic's name for them), once they did;
  /// ``Validator`` continues from it instead of identifying the same bytes again.
  var verdict: SniffVerdict? { state.withLock { $0.verdict } }

  /// Refuses a declared `Content-Length` over the largest category limit.
  public func inspect(head: ResponseHead) -> InspectorVerdict {
    let declared = head.headers.contentLength
    state.withLock { $0.declaredLength = declared }
    if let declared, declared > limits.largestMaximumBytes {
      return .reject(
        AttachmentError(
          .tooLarge,
          "The server declared \(declared) bytes, more than any attachment may have (\(limits.largestMaximumBytes))."
        ))
    }
    return .more
  }

  /// Forgets the body seen so far: a retried attempt's new body is sniffed from its first byte.
  public func restart() {
    state.withLock { $0 = State() }
  }

  /// Sniffs the first bytes, then only counts them against the type's size limit.
  public func inspect(body chunk: UnsafeRawBufferPointer, at offset: Int64) -> InspectorVerdict {
    state.withLock { state in
      let end = offset + Int64(chunk.count)
      if state.identified {
        return checkSize(end: end, state: state)
      }
      collect(chunk, at: offset, into: &state)
      guard state.tagLength != nil else { return .more }  // the first 10 bytes are not in yet
      let windowFull = state.window.count >= SniffWindow.maximumBytes
      guard state.window.count >= state.nextJudgement || windowFull else { return .more }
      let verdict = decide(&state, windowFull: windowFull, end: end)
      if !state.identified {
        state.nextJudgement = min(SniffWindow.maximumBytes, state.window.count * 2)
      }
      return verdict
    }
  }

  private func collect(_ chunk: UnsafeRawBufferPointer, at offset: Int64, into state: inout State) {
    var bytes = chunk[...]
    if state.head.count < 10 {
      let take = min(10 - state.head.count, bytes.count)
      state.head.append(contentsOf: bytes.prefix(take))
      if state.head.count == 10 {
        state.tagLength = state.head.withUnsafeBytes { MediaProbe.id3v2Length($0) }
        // The head belongs to the window too when there is no tag.
        if state.tagLength == 0 { state.window = state.head }
      }
      bytes = bytes.dropFirst(take)
      if state.tagLength == 0 {
        state.window.append(contentsOf: bytes.prefix(SniffWindow.maximumBytes - state.window.count))
        return
      }
    }
    guard let tagLength = state.tagLength, !bytes.isEmpty else { return }
    // Offset of `bytes` in the body, and the part of it after the tag.
    let start = offset + Int64(chunk.count - bytes.count)
    let skip = max(0, Int64(tagLength) - start)
    guard skip < Int64(bytes.count) else { return }
    let after = bytes.dropFirst(Int(skip))
    state.window.append(contentsOf: after.prefix(max(0, SniffWindow.maximumBytes - state.window.count)))
  }

  private func decide(_ state: inout State, windowFull: Bool, end: Int64) -> InspectorVerdict {
    state.judgements += 1
    tally?.record()
    let report = state.window.withUnsafeBytes { MediaProbe.identify(prefix: $0) }
    if let report {
      // libmagic only names what is refused: an accepted prefix never asks it.
      let result = Classifier.category(forPrefix: report, detected: Self.magicName(&state))
      switch result {
      case .failure(let error): return .reject(error)
      case .success(let category):
        state.identified = true
        state.verdict = SniffVerdict(
          format: report.format, detected: state.detected ?? nil, width: report.width, height: report.height)
        state.category = category
        state.window = []
        // A type this caller's profile leaves out is refused from its first bytes.
        if let refusal = limits.typeRefusal(report.format) {
          return .reject(refusal)
        }
        if let category, let declared = state.declaredLength,
          declared > limits.maximumBytes(for: category)
        {
          return .reject(tooLarge(category: category, bytes: declared, declared: true))
        }
        return checkSize(end: end, state: state)
      }
    }
    // The probes cannot tell (yet): libmagic says whether more bytes may still make a format.
    let detected = Self.magicName(&state)
    if windowFull || !SniffWindow.plausibleMIMETypes.contains(detected ?? "") {
      return .reject(SniffWindow.refusal(detected: detected))
    }
    return .more
  }

  /// libmagic's name for the window's first 4 KiB (all it reads), asked once per body.
  private static func magicName(_ state: inout State) -> String? {
    if let known = state.detected { return known }
    let detected = state.window.withUnsafeBytes { MagicSniffer.mimeType(of: $0) }
    state.detected = .some(detected)
    return detected
  }

  private func checkSize(end: Int64, state: State) -> InspectorVerdict {
    let maximum = state.category.map { limits.maximumBytes(for: $0) } ?? limits.largestMaximumBytes
    if end > maximum {
      return .reject(tooLarge(category: state.category, bytes: end, declared: false))
    }
    return .more
  }

  private func tooLarge(category: MediaType.Category?, bytes: Int64, declared: Bool) -> AttachmentError {
    let name = category?.rawValue ?? "attachment"
    let maximum = category.map { limits.maximumBytes(for: $0) } ?? limits.largestMaximumBytes
    let what = declared ? "declares \(bytes) bytes" : "grew past \(maximum) bytes"
    return AttachmentError(.tooLarge, "The \(name) \(what), over its limit of \(maximum).")
  }
}

/// What streaming sniffing proved about a body's first bytes: the format the probes found, and
/// what libmagic called them if it was asked. The same bytes lead the file, so the validator
/// takes this instead of identifying them a second time.
struct SniffVerdict: Sendable, Equatable {
  /// The format the first bytes identified as.
  let format: ProbedFormat
  /// libmagic's MIME type for them, when it was asked (only while the probes could not tell);
  /// `nil` otherwise: the validator asks it only if it refuses the file.
  let detected: String?
  /// The width in pixels their header gives, when it does.
  var width: Int? = nil
  /// The height in pixels their header gives, when it does.
  var height: Int? = nil
}
