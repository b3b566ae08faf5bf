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
  ///   when it is acceptable as it is; otherwise the delivered file's, with its provenance.
  /// - Throws: the validator's refusal when no rescuer undoes it (with why, when one tried),
  ///   or what the rescue throws (`deadline_exceeded`, `too_large`, `io_error`, …).
  public func attachment(
    fromFile path: String, rescuingInto output: String, limits: ValidationLimits,
    deadline: ContinuousClock.Instant? = nil
  ) throws(AttachmentError) -> Validation {
    let evidence = ImageRescuer.evidence(ofFile: path)
    let preparation = lazy.compactMap { $0.prepare(for: evidence, limits: limits) }.first
    defer { preparation?.wait() }
    let refusal: AttachmentError
    do {
      return try Validator(limits: limits).validate(file: path, deadline: deadline)
    } catch {
      refusal = error
    }
    guard let rescuer = rescuer(for: evidence.refused(with: refusal)) else { throw refusal }
    do {
      let rescue = try rescuer.rescue(
        RescueJob(
          source: path, bytes: evidence.bytes, refusal: refusal, output: output, limits: limits,
          deadline: deadline))
      var validation = try Validator(limits: limits).validate(file: output, deadline: deadline)
      validation.rescued = rescue
      return validation
    } catch {
      unlink(output)
      throw error
    }
  }
}
