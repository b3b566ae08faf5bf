import Glibc

extension [any Rescuer] {
  /// Validates a local file and, when the validator refuses it in a way one of these rescuers
  /// undoes, rescues it into `output`: the rescuers that can undo the ``Refusal`` are chosen
  /// once and tried in order, the next only when one fails (the command line's `rescue`, with
  /// the same choice and improvements as a miss of the pipeline).
  ///
  /// - Parameters:
  ///   - path: the file to deliver.
  ///   - output: where a rescued file goes (created or replaced; removed on failure).
  ///   - limits: what the delivered file must meet.
  ///   - deadline: the absolute instant by which the answer comes; `nil`: none.
  ///   - isCancelled: says the caller has gone (a command's Ctrl-C); polled while a rescue
  ///     runs, whose worker is then killed at once.
  ///   - decodeCheck: the decode check the file passes before it is acceptable as it is (as a
  ///     miss's does: ``PipelineConfiguration/decodeCheck``); `nil`: the probes alone judge. A
  ///     rescued file is not decoded again (a rescue decodes what it copies).
  /// - Returns: the file's own validation (``Validation/rescued`` is `nil`, nothing is written)
  ///   when it is acceptable as it is; otherwise the delivered file's, with its provenance. An
  ///   acceptable file that a rescuer improves (``Rescuer/improvement(for:)``: a movie iOS
  ///   would play silent) is improved into `output`, as a miss of the pipeline is; when the
  ///   improvement fails, the file's own validation is returned (the original stands), unless
  ///   it failed because the deadline passed or the caller left, which end the call as they end
  ///   a miss.
  /// - Throws: the validator's refusal when no rescuer undoes it (with why the first failed,
  ///   when one tried), or what the rescue throws (`deadline_exceeded`, `cancelled`,
  ///   `too_large`, `io_error`, …); `output` is then removed.
  public func attachment(
    fromFile path: String, rescuingInto output: String, limits: ValidationLimits,
    deadline: ContinuousClock.Instant? = nil, isCancelled: @escaping @Sendable () -> Bool = { false },
    decodeCheck: DecodeCheckConfiguration? = DecodeCheckConfiguration()
  ) throws(AttachmentError) -> Validation {
    let preparation = preparation(for: Refusal.anticipated(ofFile: path, limits: limits))
    defer { preparation?.wait() }
    let refusal: Refusal
    switch Result(catching: { () throws(Refusal) in
      try Validator(limits: limits, decodeCheck: decodeCheck).judge(file: path, deadline: deadline)
    }) {
    case .success(let validation):
      return try improving(validation, of: path, into: output, limits, deadline, isCancelled)
    case .failure(let error):
      refusal = error
    }
    // The rescuers that undo the refusal, chosen once and tried in order: the next only when
    // one fails, and not after the deadline or a verdict on the source (``RescueFallback``);
    // the first one's failure is the answer.
    var firstFailure: AttachmentError?
    for rescuer in candidates(for: refusal) {
      do {
        return try rescue(path, into: output, by: rescuer, refusal: refusal, limits, deadline, isCancelled)
      } catch {
        if error.isStop { throw error }
        firstFailure = firstFailure ?? error
        if !RescueFallback.allowsNext(after: error) { break }
      }
    }
    throw firstFailure ?? refusal.error
  }

  /// An accepted file improved by the first improver that succeeds, or as it is. As a miss's
  /// improvement: a failure delivers the original, a stop (deadline, Ctrl-C) ends the call.
  private func improving(
    _ validation: Validation, of path: String, into output: String, _ limits: ValidationLimits,
    _ deadline: ContinuousClock.Instant?, _ isCancelled: @escaping @Sendable () -> Bool
  ) throws(AttachmentError) -> Validation {
    for (improver, improvement) in improvers(for: validation) {
      do {
        return try rescue(
          path, into: output, by: improver, refusal: improvement, limits, deadline, isCancelled)
      } catch {
        if error.isStop { throw error }
      }
    }
    return validation
  }

  private func rescue(
    _ path: String, into output: String, by rescuer: any Rescuer, refusal: Refusal,
    _ limits: ValidationLimits,
    _ deadline: ContinuousClock.Instant?, _ isCancelled: @escaping @Sendable () -> Bool
  ) throws(AttachmentError) -> Validation {
    try LocalRescue.rescue(path, into: output, limits: limits, deadline: deadline) {
      (source, bytes, target) throws(AttachmentError) in
      var rescued = try rescuer.rescue(
        RescueJob(
          source: source, bytes: bytes, refusal: refusal, output: target, limits: limits, deadline: deadline,
          isCancelled: isCancelled))
      rescued.recordOriginal(refusal)
      return rescued
    }
  }
}

/// A rescue of a local file, the part every caller shares.
enum LocalRescue {
  /// Opens `path` and creates (or replaces) `output`, hands both to `body` by descriptor (a
  /// rescuer's library may read options from a file name: libvips reads `a[n=-1].webp` as
  /// `a` with an option), with the source's size in bytes, then validates what it wrote.
  /// - Returns: the delivered file's validation, with ``Validation/rescued`` set.
  /// - Throws: `io_error` when a file cannot be opened, or what `body` or the validator throws;
  ///   `output` is removed on failure.
  static func rescue(
    _ path: String, into output: String, limits: ValidationLimits, deadline: ContinuousClock.Instant?,
    _ body: (_ source: String, _ bytes: Int64, _ output: String) throws(AttachmentError) -> Rescue
  ) throws(AttachmentError) -> Validation {
    let input = open(path, O_RDONLY | O_CLOEXEC)
    var info = stat()
    guard input >= 0, fstat(input, &info) == 0 else {
      let reason = String(cString: strerror(errno))
      if input >= 0 { close(input) }
      throw AttachmentError(.ioError, "Cannot read \(Redaction.escapeControlCharacters(path)): \(reason).")
    }
    defer { close(input) }
    let written = open(output, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
    guard written >= 0 else {
      let reason = String(cString: strerror(errno))
      throw AttachmentError(.ioError, "Cannot write \(Redaction.escapeControlCharacters(output)): \(reason).")
    }
    defer { close(written) }
    do {
      let rescue = try body("/proc/self/fd/\(input)", Int64(info.st_size), "/proc/self/fd/\(written)")
      var validation = try Validator(limits: limits).validate(file: output, deadline: deadline)
      validation.record(rescue)
      return validation
    } catch {
      unlink(output)
      throw error
    }
  }
}
