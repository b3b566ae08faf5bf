import Glibc

/// A bundled image delivered in place of an attachment that could not be made: validated once,
/// when a service starts, and held in memory from then on, so that delivering it needs neither
/// the file nor the validator again (`attachkit serve --fallback-image`, the extension runner's
/// `--fallback-image`).
///
/// Only an image is taken: it is held in memory and copied into every answer that uses it, and a
/// placeholder is an image. It must be an attachment the validator accepts under the service's
/// limits, so that a device shows it as it would any other.
public struct FallbackImage: Sendable, Equatable {
  /// The file it was read from, as given.
  public let path: String
  /// The file's bytes, as validated.
  public let bytes: [UInt8]
  /// What the validator measured (type, MIME type, UTI, dimensions, digest).
  public let validation: Validation

  /// Reads and validates the image at `path` under `limits`.
  /// - Throws: ``AttachmentError``: the validator's refusal (`unsupported_type`, `too_large`,
  ///   `truncated`, …), `unsupported_type` for an accepted file that is not an image, or
  ///   `io_error` when the file cannot be read or changed while it was read.
  public init(path: String, limits: ValidationLimits = ValidationLimits()) throws(AttachmentError) {
    let validation = try Validator(limits: limits).validate(file: path)
    guard validation.category == .image else {
      throw AttachmentError(
        .unsupportedType, "A fallback image must be an image; this is \(validation.mime).",
        detected: validation.mime)
    }
    let bytes = try Self.read(path, expected: validation.bytes)
    self.path = path
    self.bytes = bytes
    self.validation = validation
  }

  /// The MIME type answered with it (`image/png`, …).
  public var mime: String { validation.mime }
  /// The UTI for `UNNotificationAttachmentOptionsTypeHintKey` (`public.png`, …).
  public var uti: String { validation.uti }
  /// The canonical file extension (`png`, …).
  public var fileExtension: String { validation.fileExtension }

  /// The whole file at `path`, which must be `expected` bytes long (the size validated).
  private static func read(_ path: String, expected: Int64) throws(AttachmentError) -> [UInt8] {
    let descriptor = open(path, O_RDONLY | O_CLOEXEC)
    guard descriptor >= 0 else {
      throw AttachmentError(
        .ioError, "The fallback image cannot be opened: \(String(cString: strerror(errno))).")
    }
    defer { _ = close(descriptor) }
    var bytes = [UInt8](repeating: 0, count: Int(expected) + 1)
    var filled = 0
    while filled < bytes.count {
      let count = bytes.withUnsafeMutableBytes { raw in
        Glibc.read(descriptor, raw.baseAddress.map { $0 + filled }, raw.count - filled)
      }
      if count < 0 && errno == EINTR { continue }
      guard count >= 0 else {
        throw AttachmentError(
          .ioError, "The fallback image cannot be read: \(String(cString: strerror(errno))).")
      }
      if count == 0 { break }
      filled += count
    }
    guard Int64(filled) == expected else {
      throw AttachmentError(.ioError, "The fallback image changed while it was read; try again.")
    }
    bytes.removeLast()
    return bytes
  }
}
