/// The thumbnail options of one attachment: what iOS takes as
/// `UNNotificationAttachmentOptionsThumbnailClippingRectKey`, `…ThumbnailTimeKey` and
/// `…ThumbnailHiddenKey`, named without their prefix and suffix (`thumbnailClippingRect`,
/// `thumbnailTime`, `thumbnailHidden`).
///
/// A request carries them (``AttachmentRequest/thumbnail``; the extension runner reads them
/// from a payload's `options` object, Airship's `crop`, `time` and `hidden`); the pipeline
/// checks them against the file it answers with (``checked(against:)``: a time needs a video,
/// inside its duration) and delivers them as ``Attachment/thumbnail``, where a video given no
/// time has the poster time proposed for it (``Validation/posterTimeSeconds``).
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

    /// Makes a rectangle (unchecked: ``problem`` says what is wrong with it, if anything).
    public init(x: Double, y: Double, width: Double, height: Double) {
      self.x = x
      self.y = y
      self.width = width
      self.height = height
    }

    /// What makes this rectangle unusable, in words (`is empty (width 0, height 0.5)`,
    /// `reaches past the right edge (x + width = 1.1 > 1)`), or `nil` when it is a non-empty
    /// rectangle inside the unit square (with 10⁻⁹ of slack for decimal fractions such as
    /// 0.1 + 0.9).
    public var problem: String? {
      for (name, value) in [("x", x), ("y", y), ("width", width), ("height", height)]
      where !value.isFinite || value < 0 || value > 1 {
        return "\(name) is \(value), outside [0, 1]"
      }
      if width <= 0 || height <= 0 { return "is empty (width \(width), height \(height))" }
      if x + width > 1 + 1e-9 { return "reaches past the right edge (x + width = \(x + width) > 1)" }
      if y + height > 1 + 1e-9 { return "reaches past the bottom edge (y + height = \(y + height) > 1)" }
      return nil
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

  /// These options checked against the fetched file (`validation`): a clipping rectangle that is
  /// not a non-empty rectangle inside the unit square (``ClippingRect/problem``), a time that is
  /// not a finite number ≥ 0, on a file that is not a video, or past its duration, is dropped
  /// with a reason (the second value); a video
  /// left without a time (none given, or the given one dropped) gets AttachmentKit's proposed
  /// poster time (``timeIsProposed``).
  public func checked(against validation: Validation) -> (ThumbnailOptions, [String]) {
    var options = self
    var problems: [String] = []
    if let rect = clippingRect, let problem = rect.problem {
      problems.append("crop \(problem): thumbnailClippingRect dropped")
      options.clippingRect = nil
    }
    if let time, !time.isFinite || time < 0 {
      problems.append("time \(time) is not a number of seconds ≥ 0: thumbnailTime dropped")
      options.time = nil
    } else if let time {
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

  /// A number for people: up to three decimals, no trailing zeros.
  package static func seconds(_ value: Double) -> String {
    // Without Foundation (the library links none): whole thousandths, trailing zeros dropped.
    guard value.isFinite, abs(value) < 1e15 else { return String(value) }
    let thousandths = Int64((abs(value) * 1000).rounded())
    var text = (value < 0 && thousandths != 0 ? "-" : "") + String(thousandths / 1000)
    var fraction = String(thousandths % 1000)
    guard fraction != "0" else { return text }
    fraction = String(repeating: "0", count: 3 - fraction.count) + fraction
    while fraction.hasSuffix("0") { fraction.removeLast() }
    text += "." + fraction
    return text
  }
}
