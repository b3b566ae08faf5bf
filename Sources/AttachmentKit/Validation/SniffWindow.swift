/// The bytes sniffing looks at, and what it says when nothing in them is acceptable.
enum SniffWindow {
  /// A wrong type is refused after at most this many bytes (counted after an ID3v2 tag).
  static let maximumBytes = 64 * 1024

  /// MIME types libmagic gives for accepted formats (or vaguely, for ones it cannot name):
  /// while libmagic says one of these, sniffing waits for more bytes before refusing.
  static let plausibleMIMETypes: Set<String> = [
    "image/jpeg", "image/png", "image/gif", "image/tiff", "video/mp4", "video/quicktime",
    "video/mpeg", "audio/mpeg", "audio/x-hx-aac-adts", "audio/aac", "audio/x-m4a", "audio/mp4",
    "audio/x-wav", "audio/wav", "application/octet-stream", "video/x-m4v",
  ]

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
