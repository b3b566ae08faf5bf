/// The channel counts and sample rates the audio probes (WAV, AIFF / AIFF-C, CAF) accept: what
/// a decoder can open, not merely what the header's field can hold.
///
/// A header field of 16 or 32 bits can say 8,193 channels or a 10 MHz rate; ffmpeg's decoders
/// refuse more than 512 channels ("Too many channels") and Core Audio's players are built for
/// mono to multichannel surround at telephone to studio rates. The bounds are generous for any
/// real recording: 1 to 64 channels, 1 kHz to 768 kHz (8 × 96 kHz, the highest rate
/// professional recorders write).
enum AudioBounds {
  /// Channel counts accepted.
  static let channels: ClosedRange<Int> = 1...64
  /// Sample rates accepted, in hertz.
  static let sampleRates: ClosedRange<Double> = 1_000...768_000

  /// Why `channels` and `sampleRate` are outside the bounds, or nil when both are inside (a
  /// NaN or infinite rate is outside).
  static func problem(channels: Int, sampleRate: Double) -> String? {
    guard Self.channels.contains(channels) else {
      return
        "\(channels) channels, outside the \(Self.channels.lowerBound)-\(Self.channels.upperBound) a decoder opens"
    }
    guard sampleRate.isFinite, sampleRates.contains(sampleRate) else {
      return "a sample rate of \(sampleRate) Hz, outside the 1 kHz-768 kHz a decoder opens"
    }
    return nil
  }
}
