import AttachmentKit
import Foundation

/// The runner's side of ``AttachmentKit/ThumbnailOptions``: read from a payload's `options`
/// object (`{"crop": {"x", "y", "width", "height"}, "time": seconds, "hidden": bool}`,
/// Airship's fields), each unusable field dropped with a reason; written as
/// `attachments[i].options` and as the trace shows them.
extension ThumbnailOptions {
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
    if let problem = rect.problem { return .failure(CropProblem(text: problem)) }
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

}
