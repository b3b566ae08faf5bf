import CAV

/// A poster's search through decoded frames (``PosterMaker/pick(from:stream:index:av:interrupt:searchEnd:window:)``):
/// each frame is scaled into the poster's box and measured, and the brightest so far is kept.
/// The search is over once a frame is bright enough, the frame budget is spent, or (with a
/// `window`, in seconds of the video) a frame comes past the window.
struct FrameSearch {
  private let scaler: FrameScaler
  private let timeBase: AVRational
  /// The stream's start time, in `timeBase` units; `nil`: the first frame's stamp is zero.
  private let origin: Int64?
  private let window: Double?
  private let darkLuma: Int
  private let maximumDecodedFrames: Int
  private var current: OwnedFrame
  private var firstStamp: Int64?
  private var bestLuma = -1
  /// The brightest frame so far.
  private(set) var best: OwnedFrame?
  /// Its time in seconds from the stream's start, when its stamp says.
  private(set) var bestSeconds: Double?
  /// Frames measured so far.
  private(set) var decoded = 0
  /// Whether a frame was bright enough (mean luma at least `darkLuma`).
  private(set) var found = false
  private var pastWindow = false

  /// A search of `stream`'s frames scaled by `scaler`.
  /// - Throws: "out of memory".
  init(
    scaler: FrameScaler, stream: UnsafeMutablePointer<AVStream>, window: Double?, darkLuma: Int,
    maximumDecodedFrames: Int
  ) throws(MediaFailure) {
    self.scaler = scaler
    timeBase = stream.pointee.time_base
    origin = stream.pointee.start_time == ak_av_nopts_value() ? nil : stream.pointee.start_time
    self.window = window
    self.darkLuma = darkLuma
    self.maximumDecodedFrames = maximumDecodedFrames
    current = try scaler.makeFrame()
  }

  /// Whether no further frame can change the pick.
  var isOver: Bool { found || pastWindow || decoded >= maximumDecodedFrames }

  /// Measures `frame` (a decoder's, not kept) unless the search is over.
  /// - Throws: what scaling throws ("out of memory").
  mutating func take(_ frame: UnsafeMutablePointer<AVFrame>) throws(MediaFailure) {
    guard !isOver else { return }
    let seconds = self.seconds(of: frame)
    if let window, let seconds, seconds > window {
      pastWindow = true
      return
    }
    decoded += 1
    try scaler.scale(frame, into: current.pointer)
    let luma = PosterMaker.meanLuma(current.pointer)
    guard luma > bestLuma else { return }
    bestLuma = luma
    bestSeconds = seconds
    let previous = best
    best = current
    if let previous { current = previous } else { current = try scaler.makeFrame() }
    found = luma >= darkLuma
  }

  /// `frame`'s time in seconds from the stream's start (or its first frame), when stamped.
  private mutating func seconds(of frame: UnsafeMutablePointer<AVFrame>) -> Double? {
    let stamp = frame.pointee.best_effort_timestamp
    guard stamp != ak_av_nopts_value(), timeBase.num > 0, timeBase.den > 0 else { return nil }
    if firstStamp == nil { firstStamp = stamp }
    let start = origin ?? firstStamp ?? stamp
    return max(0, Double(stamp - start) * Double(timeBase.num) / Double(timeBase.den))
  }
}
