import AttachmentKit
import Foundation

/// The thumbnail options of one attachment: what iOS takes as
/// `UNNotificationAttachmentOptionsThumbnailClippingRectKey`, `…ThumbnailTimeKey` and
/// `…ThumbnailHiddenKey`, named without their prefix and suffix (`thumbnailClippingRect`,
/// `thumbnailTime`, `thumbnailHidden`).
///
/// Read from a payload's `options` object (`{"crop": {"x", "y", "width", "height"}, "time":
/// seconds, "hidden": bool}`, Airship's fields) with ``parse(_:origin:)``, which drops each
/// unusable field with a reason; checked against the fetched file with
/// ``checked(against:)`` (a time needs a video, and must be inside its duration); a video
/// given no time gets the poster time AttachmentKit proposed (``AttachmentKit/Validation/posterTimeSeconds``).
public struct ThumbnailOptions: Sendable, Equatable {
  /// A clipping rectangle in unit coordinates: each value in [0, 1], the rectangle inside the
  /// unit square (`x + width ≤ 1`, `y + height ≤ 1`), not empty.
  public struct ClippingRect: Sendable, Equatable {
    /// The left edge, from 0 (the image's left) to 1.
    public var x: Double
    /// The top edge, from 0 to 1.
    public var y: Double
    /// The width, a fraction of the image's.
    public var width: Double
    /// The height, a fraction of the image's.
    public var height: Double

    /// Makes a rectangle (unchecked: see ``ThumbnailOptions/parse(_:origin:)``).
    public init(x: Double, y: Double, width: Double, height: Double) {
      self.x = x
      self.y = y
      self.width = width
      self.height = height
    }
  }

  /// `thumbnailClippingRect`: the part of the image shown as the thumbnail.
  public var clippingRect: ClippingRect?
  /// `thumbnailTime`: the time of a video's frame shown as the thumbnail, in seconds.
  public var time: Double?
  /// Whether ``time`` is AttachmentKit's proposal (the payload gave none).
  public var timeIsProposed = false
  /// `thumbnailHidden`: whether the thumbnail is hidden.
  public var hidden: Bool?

  /// Makes options; none by default.
  public init(clippingRect: ClippingRect? = nil, time: Double? = nil, hidden: Bool? = nil) {
    self.clippingRect = clippingRect
    self.time = time
    self.hidden = hidden
  }

  /// Whether no option is set.
  public var isEmpty: Bool { clippingRect == nil && time == nil && hidden == nil }

  /// Reads an `options` value found at `origin` (a key path, for the reasons). A field that is
  /// unusable is dropped, with one sentence in the second value saying why: `crop` that is not
  /// an object of four numbers each in [0, 1], empty, or reaching past the unit square; `time`
  /// that is not a finite number ≥ 0; `hidden` that is not a boolean. Other fields are ignored.
  public static func parse(_ value: JSONValue, origin: String) -> (ThumbnailOptions, [String]) {
    guard let fields = value.objectValue else {
      return (ThumbnailOptions(), ["\(origin) is \(value.kindDescription), not an object: ignored"])
    }
    var options = ThumbnailOptions()
    var problems: [String] = []
    if let crop = fields["crop"] {
      switch clippingRect(crop) {
      case .success(let rect): options.clippingRect = rect
      case .failure(let reason):
        problems.append("\(origin).crop \(reason.text): thumbnailClippingRect dropped")
      }
    }
    if let time = fields["time"] {
      if let seconds = number(time), seconds.isFinite, seconds >= 0 {
        options.time = seconds
      } else if let seconds = number(time) {
        problems.append("\(origin).time is \(seconds), not a time ≥ 0 s: thumbnailTime dropped")
      } else {
        problems.append("\(origin).time is \(time.kindDescription), not a number: thumbnailTime dropped")
      }
    }
    if let hidden = fields["hidden"] {
      if case .bool(let flag) = hidden {
        options.hidden = flag
      } else {
        problems.append(
          "\(origin).hidden is \(hidden.kindDescription), not a boolean: thumbnailHidden dropped")
      }
    }
    return (options, problems)
  }

  /// Why a `crop` value is unusable.
  private struct CropProblem: Error {
    var text: String
  }

  /// The rectangle of a `crop` value, or why it is unusable.
  private static func clippingRect(_ value: JSONValue) -> Result<ClippingRect, CropProblem> {
    guard let fields = value.objectValue else {
      return .failure(CropProblem(text: "is \(value.kindDescription), not {x, y, width, height}"))
    }
    var values: [Double] = []
    for name in ["x", "y", "width", "height"] {
      guard let field = fields[name] else { return .failure(CropProblem(text: "has no \(name)")) }
      guard let number = number(field), number.isFinite else {
        return .failure(CropProblem(text: "\(name) is \(field.kindDescription), not a number"))
      }
      guard number >= 0, number <= 1 else {
        return .failure(CropProblem(text: "\(name) is \(number), outside [0, 1]"))
      }
      values.append(number)
    }
    let rect = ClippingRect(x: values[0], y: values[1], width: values[2], height: values[3])
    if rect.width <= 0 || rect.height <= 0 {
      return .failure(CropProblem(text: "is empty (width \(rect.width), height \(rect.height))"))
    }
    // A little slack for decimal fractions such as 0.1 + 0.9.
    if rect.x + rect.width > 1 + 1e-9 {
      return .failure(
        CropProblem(text: "reaches past the right edge (x + width = \(rect.x + rect.width) > 1)"))
    }
    if rect.y + rect.height > 1 + 1e-9 {
      return .failure(
        CropProblem(text: "reaches past the bottom edge (y + height = \(rect.y + rect.height) > 1)"))
    }
    return .success(rect)
  }

  /// A JSON number's value (an integer or a double); `nil` for anything else.
  private static func number(_ value: JSONValue) -> Double? {
    switch value {
    case .integer(let number): Double(number)
    case .double(let number): number
    default: nil
    }
  }

  /// These options checked against the fetched file (`validation`): a time on a file that is
  /// not a video, or past its duration, is dropped with a reason (the second value); a video
  /// left without a time (none given, or the given one dropped) gets AttachmentKit's proposed
  /// poster time (``timeIsProposed``).
  public func checked(against validation: Validation) -> (ThumbnailOptions, [String]) {
    var options = self
    var problems: [String] = []
    if let time {
      if validation.category != .video {
        problems.append(
          "time \(Self.seconds(time)) s on an \(validation.category.rawValue) (\(validation.uti)), "
            + "not a video: thumbnailTime dropped")
        options.time = nil
      } else if let duration = validation.durationSeconds, time > duration {
        problems.append(
          "time \(Self.seconds(time)) s is past the video's duration of \(Self.seconds(duration)) s: "
            + "thumbnailTime dropped")
        options.time = nil
      }
    }
    // A video left without a time (none given, or the given one dropped) takes the proposal.
    if options.time == nil, validation.category == .video,
      let proposed = validation.posterTimeSeconds
    {
      options.time = proposed
      options.timeIsProposed = true
    }
    return (options, problems)
  }

  /// The options as JSON (`attachments[i].options`), keys sorted; only those set.
  var json: JSON {
    var fields: [(key: String, value: JSON)] = []
    if let rect = clippingRect {
      fields.append(
        (
          "thumbnailClippingRect",
          .object([
            ("height", .double(rect.height)), ("width", .double(rect.width)), ("x", .double(rect.x)),
            ("y", .double(rect.y)),
          ])
        ))
    }
    if let hidden { fields.append(("thumbnailHidden", .bool(hidden))) }
    if let time { fields.append(("thumbnailTime", .double(time))) }
    return .object(fields)
  }

  /// The options as the trace shows them (`thumbnailTime 1.04 s (proposed)`), or `nil` when none.
  var summary: String? {
    var parts: [String] = []
    if let rect = clippingRect {
      parts.append(
        "thumbnailClippingRect {x \(Self.seconds(rect.x)), y \(Self.seconds(rect.y)), "
          + "width \(Self.seconds(rect.width)), height \(Self.seconds(rect.height))}")
    }
    if let time {
      parts.append("thumbnailTime \(Self.seconds(time)) s\(timeIsProposed ? " (proposed)" : "")")
    }
    if let hidden { parts.append("thumbnailHidden \(hidden)") }
    return parts.isEmpty ? nil : parts.joined(separator: ", ")
  }

  /// A number for people: up to three decimals, no trailing zeros.
  static func seconds(_ value: Double) -> String {
    var text = String(format: "%.3f", value)
    while text.hasSuffix("0") { text.removeLast() }
    if text.hasSuffix(".") { text.removeLast() }
    return text
  }
}
