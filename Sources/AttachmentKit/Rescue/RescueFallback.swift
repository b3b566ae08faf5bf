/// When the next rescuer of a list is tried after one fails (see ``Rescuer``): not after the
/// deadline or a caller that left (``AttachmentError/isStop``), and not after a failure that
/// judged the source itself: over a decoding bound (`too_many_pixels`, `too_complex`: a bomb
/// stays refused whichever rescuer follows), or a worker it crashed, or that ran out of CPU time
/// or memory on it (a hostile input is not handed to a second decoder). Any other failure (a
/// transcode that does not fit the time left, a library error, a cut-short source) lets the
/// next one try: the poster after the media rescue.
enum RescueFallback {
  /// What a worker's death says (``WorkerProcess``), after "the decoder failed (".
  static let workerDied = "its worker died of signal"
  /// What a worker killed at its CPU limit says.
  static let cpuExhausted = "the decoder used up its CPU time"
  /// What a worker at its memory ceiling says.
  static let memoryExhausted = "it needed more memory than the rescue allows"

  /// Whether the next rescuer may try after `error`.
  static func allowsNext(after error: AttachmentError) -> Bool {
    if error.isStop || error.code == .tooManyPixels || error.code == .tooComplex { return false }
    return error.sourceVerdict == nil
  }
}
