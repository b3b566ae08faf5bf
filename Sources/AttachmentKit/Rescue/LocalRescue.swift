import Glibc

extension [any Rescuer] {
  /// Validates a local file and, when the validator refuses it in a way one of these rescuers
  /// undoes, rescues it into `output` with the first that can (the command line's `rescue`).
  ///
  /// - Parameters:
  ///   - path: the file to deliver.
  ///   - output: where a rescued file goes (created or replaced; removed on failure).
  ///   - limits: what the delivered file must meet.
  ///   - deadline: the absolute instant by which the answer comes; `nil`: none.
  /// - Returns: the file's own validation (``Validation/rescued`` is `nil`, nothing is written)
  ///   when it is acceptable as it is; otherwise the delivered file's, with its provenance. An
  ///   acceptable file that a rescuer improves (``Rescuer/improvement(for:)``: a movie iOS
  ///   would play silent) is improved into `output`, as a miss of the pipeline is; when the
  ///   improvement fails, the file's own validation is returned (the original stands).
  /// - Throws: the validator's refusal when no rescuer undoes it (with why, when one tried),
  ///   or what the rescue throws (`deadline_exceeded`, `too_large`, `io_error`, …).
  public func attachment(
    fromFile path: String, rescuingInto output: String, limits: ValidationLimits,
    deadline: ContinuousClock.Instant? = nil
  ) throws(AttachmentError) -> Validation {
    let evidence = ImageRescuer.evidence(ofFile: path)
    let preparation = preparation(for: evidence, limits: limits)
    defer { preparation?.wait() }
    let refusal: AttachmentError
    do {
      let validation = try Validator(limits: limits).validate(file: path, deadline: deadline)
      guard let (improver, improvement) = improver(for: validation) else { return validation }
      let improved = try? LocalRescue.rescue(path, into: output, limits: limits, deadline: deadline) {
        (source, bytes, target) throws(AttachmentError) in
        try improver.rescue(
          RescueJob(
            source: source, bytes: bytes, refusal: improvement, output: target, limits: limits,
            deadline: deadline))
      }
      return improved ?? validation
    } catch {
      refusal = error
    }
    guard let rescuer = rescuer(for: evidence.refused(with: refusal)) else { throw refusal }
    return try LocalRescue.rescue(path, into: output, limits: limits, deadline: deadline) {
      (source, bytes, target) throws(AttachmentError) in
      try rescuer.rescue(
        RescueJob(
          source: source, bytes: bytes, refusal: refusal, output: target, limits: limits, deadline: deadline))
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
      if input >= 0 { close(input) }
      throw AttachmentError(.ioError, "Cannot read \(Redaction.escapeControlCharacters(path)).")
    }
    defer { close(input) }
    let written = open(output, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
    guard written >= 0 else {
      throw AttachmentError(.ioError, "Cannot write \(Redaction.escapeControlCharacters(output)).")
    }
    defer { close(written) }
    do {
      let rescue = try body("/proc/self/fd/\(input)", Int64(info.st_size), "/proc/self/fd/\(written)")
      var validation = try Validator(limits: limits).validate(file: output, deadline: deadline)
      validation.rescued = rescue
      return validation
    } catch {
      unlink(output)
      throw error
    }
  }
}
