import CAV

/// Scales and converts decoded frames to one size and pixel format with libswscale (bicubic).
/// A stream may change size at a keyframe: the scaler is made again for each new input size
/// or format. Used on one thread; freed when released.
final class FrameScaler {
  private let av: Libav
  /// The output width and height, in pixels, and pixel format.
  let width: Int32
  let height: Int32
  let format: AVPixelFormat
  private var context: OpaquePointer?
  /// The frame width, height and pixel format `context` was made for.
  private var input: [Int32] = []

  /// A scaler to `width` × `height` in `format`.
  init(width: Int32, height: Int32, format: AVPixelFormat, av: Libav) throws(MediaFailure) {
    self.av = av
    self.width = width
    self.height = height
    self.format = format
  }

  deinit {
    if let context { av.sws_freeContext(context) }
  }

  /// A frame of the output's size and format, its buffers allocated.
  /// - Throws: "out of memory".
  func makeFrame() throws(MediaFailure) -> OwnedFrame {
    try OwnedFrame(width: width, height: height, format: format, av: av)
  }

  /// Whether `frame` is already of the output's size and format (no scaling needed).
  func matches(_ frame: UnsafeMutablePointer<AVFrame>) -> Bool {
    frame.pointee.width == width && frame.pointee.height == height && frame.pointee.format == format.rawValue
  }

  /// Scales `frame` into `output` (a frame from ``makeFrame()``).
  /// - Throws: a reason when FFmpeg cannot scale frames of that size or format.
  func scale(_ frame: UnsafeMutablePointer<AVFrame>, into output: UnsafeMutablePointer<AVFrame>)
    throws(MediaFailure)
  {
    let shape = [frame.pointee.width, frame.pointee.height, frame.pointee.format]
    if context == nil || input != shape {
      if let context { av.sws_freeContext(context) }
      input = shape
      context = av.sws_getContext(
        frame.pointee.width, frame.pointee.height, AVPixelFormat(frame.pointee.format), width, height, format,
        Int32(SWS_BICUBIC), nil, nil, nil)
      guard context != nil else { throw .unrescued("FFmpeg cannot scale its frames") }
    }
    guard av.sws_scale_frame(context, output, frame) >= 0 else {
      throw .unrescued("FFmpeg cannot scale a frame")
    }
  }
}
