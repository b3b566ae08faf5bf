/// How a delivered image was made from a near-miss: what the server sent, and what the rescue
/// did to it. ``Validation`` then describes the delivered file, and this its origin.
public struct Rescue: Sendable, Equatable, Codable {
  /// What the rescue did.
  public enum Action: String, Sendable, Codable, CaseIterable {
    /// The format changed (WebP, HEIC, AVIF or a 16-bit PNG to JPEG, PNG or GIF).
    case converted
    /// The pixels were scaled down to fit the byte and decoded-pixel limits.
    case downscaled
  }

  /// The MIME type of what the server sent, e.g. `"image/webp"`.
  public var from: String
  /// What was done, in this order: `converted`, then `downscaled`; never empty.
  public var actions: [Action]
  /// The size of what the server sent, in bytes.
  public var originalBytes: Int64
  /// The width of what the server sent, in pixels, as stored (before EXIF orientation).
  public var originalWidth: Int
  /// The height of what the server sent, in pixels, as stored (before EXIF orientation).
  public var originalHeight: Int

  /// Makes a rescue record.
  public init(from: String, actions: [Action], originalBytes: Int64, originalWidth: Int, originalHeight: Int)
  {
    self.from = from
    self.actions = actions
    self.originalBytes = originalBytes
    self.originalWidth = originalWidth
    self.originalHeight = originalHeight
  }
}
