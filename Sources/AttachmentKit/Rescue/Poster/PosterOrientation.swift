import CAV

/// A video's display orientation, from its stream's display matrix (a phone's portrait video is
/// stored landscape with a quarter turn), applied to a still, which a JPEG carries no matrix
/// for: the frame's pixels are turned. Flips are ignored, as the `ffmpeg` command's autorotate
/// ignores them for a plain rotation.
struct PosterOrientation: Equatable {
  /// Quarter turns clockwise that show the stored frame upright: 0, 1, 2 or 3.
  let quarterTurns: Int

  /// The orientation of `stream`: upright when it has no display matrix, or one that is not a
  /// multiple of 90° (within a degree).
  init(of stream: UnsafeMutablePointer<AVStream>, av: Libav) {
    var size = 0
    guard let data = av.av_stream_get_side_data(stream, AV_PKT_DATA_DISPLAYMATRIX, &size), size >= 36 else {
      self.init(counterclockwiseDegrees: 0)
      return
    }
    let degrees = data.withMemoryRebound(to: Int32.self, capacity: 9) { av.av_display_rotation_get($0) }
    self.init(counterclockwiseDegrees: degrees)
  }

  /// The orientation of a matrix that turns the frame `degrees` counterclockwise
  /// (`av_display_rotation_get`'s answer).
  init(counterclockwiseDegrees degrees: Double) {
    guard degrees.isFinite else {
      quarterTurns = 0
      return
    }
    var clockwise = (-degrees).rounded().truncatingRemainder(dividingBy: 360)
    if clockwise < 0 { clockwise += 360 }
    let turns = (clockwise / 90).rounded()
    quarterTurns = abs(clockwise - turns * 90) < 1 ? Int(turns) % 4 : 0
  }

  /// `frame` (full-range YUV 4:2:0, even sizes) turned upright: a new frame for a turn, `frame`
  /// itself when there is none.
  /// - Throws: "out of memory".
  func apply(to frame: OwnedFrame, av: Libav) throws(MediaFailure) -> OwnedFrame {
    guard quarterTurns != 0 else { return frame }
    let source = frame.pointer
    let (width, height) = (source.pointee.width, source.pointee.height)
    let turned = quarterTurns == 2 ? (width, height) : (height, width)
    let output = try OwnedFrame(width: turned.0, height: turned.1, format: AV_PIX_FMT_YUVJ420P, av: av)
    let target = output.pointer
    for plane in 0..<3 {
      let shift = plane == 0 ? 0 : 1
      let (inWidth, inHeight) = (Int(width) >> shift, Int(height) >> shift)
      guard let from = Self.plane(source, plane), let to = Self.plane(target, plane) else { continue }
      let (fromStride, toStride) = (Self.stride(source, plane), Self.stride(target, plane))
      let outWidth = quarterTurns == 2 ? inWidth : inHeight
      let outHeight = quarterTurns == 2 ? inHeight : inWidth
      for y in 0..<outHeight {
        for x in 0..<outWidth {
          let (sourceX, sourceY): (Int, Int)
          switch quarterTurns {
          case 1: (sourceX, sourceY) = (y, inHeight - 1 - x)  // clockwise
          case 2: (sourceX, sourceY) = (inWidth - 1 - x, inHeight - 1 - y)
          default: (sourceX, sourceY) = (inWidth - 1 - y, x)  // counterclockwise
          }
          to[y * toStride + x] = from[sourceY * fromStride + sourceX]
        }
      }
    }
    return output
  }

  private static func plane(_ frame: UnsafeMutablePointer<AVFrame>, _ index: Int) -> UnsafeMutablePointer<
    UInt8
  >? {
    switch index {
    case 0: frame.pointee.data.0
    case 1: frame.pointee.data.1
    default: frame.pointee.data.2
    }
  }

  private static func stride(_ frame: UnsafeMutablePointer<AVFrame>, _ index: Int) -> Int {
    switch index {
    case 0: Int(frame.pointee.linesize.0)
    case 1: Int(frame.pointee.linesize.1)
    default: Int(frame.pointee.linesize.2)
    }
  }
}
