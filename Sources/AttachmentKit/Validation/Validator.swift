import Glibc

/// Decides from the bytes alone whether a file is an attachment iOS will accept.
///
/// Never trusts the URL, the file name or a `Content-Type` header. The structural probes
/// decide the type; libmagic names what a refused file is. Pure over the file it is given:
/// no network, no cache.
public struct Validator: Sendable {
  /// The limits files must meet.
  public var limits: ValidationLimits

  /// Makes a validator with limits.
  public init(limits: ValidationLimits = ValidationLimits()) {
    self.limits = limits
  }

  /// Validates a complete file on disk.
  ///
  /// Reads at most the first 64 KiB (after an ID3v2 tag) to identify it, then walks its
  /// structure piecewise; memory does not grow with the file's size.
  /// - Parameters:
  ///   - path: the file to check.
  ///   - sha256: the file's digest when the caller already has it (a download computes it
  ///     while streaming); otherwise the file is hashed here.
  /// - Returns: the ``Validation`` of an accepted file.
  /// - Throws: ``AttachmentError`` with `empty`, `unsupported_type` (with `detected`),
  ///   `truncated`, `too_large`, `too_long`, `too_many_pixels`, or `io_error` when the file
  ///   cannot be read.
  public func validate(file path: String, sha256: String? = nil) throws(AttachmentError) -> Validation {
    let file: FileBytes
    do {
      file = try FileBytes(path: path)
    } catch {
      throw AttachmentError(.ioError, "Cannot read \(Redaction.escapeControlCharacters(path)).")
    }
    let size = file.count
    guard size > 0 else { throw AttachmentError(.empty, "The file is empty (0 bytes).") }

    let head = file.bytes(at: 0, count: 10)
    let tagLength = head.withUnsafeBytes { MediaProbe.id3v2Length($0) }
    let window = file.bytes(at: Int64(tagLength), count: SniffWindow.maximumBytes)
    let identified = window.withUnsafeBytes { MediaProbe.identify(prefix: $0) }
    let detected = window.withUnsafeBytes { MagicSniffer.mimeType(of: $0) }

    guard let identified else {
      throw SniffWindow.refusal(detected: detected)
    }
    let report: ProbeReport
    switch MediaProbe.inspect(file: file, as: identified.format) {
    case .success(let complete): report = complete
    case .failure(.truncated(let detail)):
      var error = AttachmentError(.truncated, "The file is cut short: \(detail).", detected: detected)
      error.isRejection = true
      throw error
    case .failure(.malformed(let detail)):
      throw AttachmentError(.unsupportedType, "The file is malformed: \(detail).", detected: detected)
    }
    let type = try Classifier.mediaType(for: report, detected: detected).get()
    try check(type: type, report: report, size: size)

    let digest: String
    if let sha256 {
      digest = sha256
    } else if let hashed = SHA256Hasher.hashFile(atPath: path) {
      digest = hashed.digest
    } else {
      throw AttachmentError(.ioError, "Cannot read \(Redaction.escapeControlCharacters(path)) to hash it.")
    }
    return Validation(
      type: type, detectedMIME: detected, bytes: size, sha256: digest, width: report.width,
      height: report.height, frames: report.frames, durationSeconds: report.durationSeconds,
      warnings: warnings(type: type, detected: detected) + report.notes)
  }

  private func check(type: MediaType, report: ProbeReport, size: Int64) throws(AttachmentError) {
    let maximum = limits.maximumBytes(for: type.category)
    if size > maximum {
      throw AttachmentError(
        .tooLarge, "The \(type.category.rawValue) is \(size) bytes, over the limit of \(maximum).")
    }
    if type.category == .video, let seconds = report.durationSeconds, seconds > limits.maximumVideoSeconds {
      throw AttachmentError(
        .tooLong,
        "The video lasts \(Self.format(seconds)) s, over the limit of \(Self.format(limits.maximumVideoSeconds)) s."
      )
    }
    if type.category == .image, let width = report.width, let height = report.height {
      let (pixels, overflow) = Int64(width).multipliedReportingOverflow(by: Int64(height))
      let (decoded, overflow4) = pixels.multipliedReportingOverflow(by: 4)
      if overflow || overflow4 || decoded > limits.maximumDecodedImageBytes {
        throw AttachmentError(
          .tooManyPixels,
          "The image is \(width)×\(height) pixels: decoded it needs \(decoded) bytes, over \(limits.maximumDecodedImageBytes)."
        )
      }
    }
  }

  private func warnings(type: MediaType, detected: String?) -> [String] {
    var warnings: [String] = []
    if !type.isInApplesTable {
      warnings.append(
        "\(type.fileExtension.uppercased()) is outside Apple's published attachment types; iOS accepts it with the type hint \(type.uti)."
      )
    }
    return warnings
  }

  private static func format(_ seconds: Double) -> String {
    let tenths = (seconds * 10).rounded() / 10
    return String(tenths)
  }
}
