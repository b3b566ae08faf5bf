/// The bytes sniffing looks at, and what it says when nothing in them is acceptable.
enum SniffWindow {
  /// A wrong type is refused after at most this many bytes (counted after an ID3v2 tag).
  static let maximumBytes = 64 * 1024

  /// MIME types libmagic gives for accepted formats (each format's row names its own), or
  /// vaguely, for ones it cannot name: while libmagic says one of these, sniffing waits for
  /// more bytes before refusing.
  static let plausibleMIMETypes: Set<String> = Set(ProbedFormat.allCases.flatMap(\.row.magicNames)).union([
    "application/octet-stream"
  ])

  /// The refusal of bytes no probe recognises, naming what libmagic says they are.
  static func refusal(detected: String?) -> AttachmentError {
    let what = detected ?? "unknown data"
    let message: String
    switch what {
    case "text/html":
      message = "This is an HTML page, not media (often an error or login page served in its place)."
    case "application/octet-stream", "unknown data":
      message = "The bytes are not any accepted image, video or audio format."
    case _ where plausibleMIMETypes.contains(what):
      message = "The bytes begin like \(what) but their structure is not valid \(what)."
    default:
      message = "This is \(what), which is not an accepted attachment type."
    }
    return AttachmentError(.unsupportedType, message, detected: what)
  }
}
