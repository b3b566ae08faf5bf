/// The arithmetic of a rescue, apart from libvips: which format to deliver and the box the
/// image must fit in. Pure, so every limit can be tested as a value.
struct RescuePlan: Equatable {
  /// The delivered format.
  enum Output: Equatable {
    /// A photo: no alpha, one frame.
    case jpeg
    /// An image with alpha, one frame.
    case png
    /// Every frame of an animation.
    case gif

    /// The MIME type of the delivered file.
    var mime: String { mediaType.mime }

    /// The media type the delivered file is (its MIME type, extension and UTI come from
    /// ``MediaType``'s table).
    var mediaType: MediaType {
      switch self {
      case .jpeg: .jpeg
      case .png: .png
      case .gif: .gif
      }
    }
  }

  /// The delivered format.
  var output: Output
  /// The longest side allowed, in pixels (libvips fits the image in a `box` × `box` square,
  /// keeping its aspect ratio, and never enlarges it).
  var box: Int
  /// Whether `box` makes the image smaller than it is.
  var downscales: Bool

  /// The plan for a source `width` × `height` pixels a frame, `frames` frames, of `bytes` bytes.
  ///
  /// The box is the largest that keeps (a) the decoded size within
  /// ``ValidationLimits/maximumDecodedImageBytes``, (b) the longest side within
  /// ``RescueConfiguration/maximumDimension``, and (c), when the source is over
  /// ``ValidationLimits/maximumImageBytes``, the pixel count shrunk by the same ratio as the
  /// bytes must shrink, and (d) for an animation, every frame together within
  /// ``RescueConfiguration/maximumAnimationPixels`` (GIF encoding quantizes every pixel of every
  /// frame: about 4 MP/s here). Rounding is downwards, with 0.1 % to spare.
  init(
    width: Int, height: Int, bytes: Int64, hasAlpha: Bool, animated: Bool, frames: Int = 1,
    limits: ValidationLimits, configuration: RescueConfiguration
  ) {
    output = animated && configuration.keepsAnimation ? .gif : (hasAlpha ? .png : .jpeg)
    let longest = max(1, width, height)
    let pixels = Double(max(1, width)) * Double(max(1, height))
    var scale = 1.0
    let allowedPixels = Double(limits.maximumDecodedImageBytes / 4)
    if pixels > allowedPixels { scale = min(scale, (allowedPixels / pixels).squareRoot() * 0.999) }
    if output == .gif, frames > 1 {
      let allowed = Double(configuration.maximumAnimationPixels) / Double(frames)
      if pixels > allowed { scale = min(scale, (allowed / pixels).squareRoot() * 0.999) }
    }
    if bytes > limits.maximumImageBytes {
      scale = min(scale, (Double(limits.maximumImageBytes) / Double(bytes)).squareRoot() * 0.999)
    }
    let scaled = Int((Double(longest) * scale).rounded(.down))
    box = max(1, min(scaled, configuration.maximumDimension))
    downscales = box < longest
  }

  /// The next, smaller box after a delivered file of `bytes` came out over `limit` bytes: the
  /// area shrinks by the ratio of the bytes, with 10 % to spare.
  static func smallerBox(than box: Int, bytes: Int64, limit: Int64) -> Int {
    let ratio = (Double(limit) / Double(max(bytes, 1))).squareRoot() * 0.9
    return max(1, min(box - 1, Int((Double(box) * ratio).rounded(.down))))
  }
}
