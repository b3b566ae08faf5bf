import CAV

// Owners of FFmpeg's allocations: each frees what it holds when released, so that an
// initialiser that throws part-way (an encoder that does not open, a resampler that does not
// initialise, a file that cannot be written) frees whatever it had made by then, in Swift's
// order, without a free on each path.

/// An `AVFrame` (and the buffers it references), freed when released.
final class OwnedFrame {
  private let av: Libav
  /// The frame.
  let pointer: UnsafeMutablePointer<AVFrame>

  /// Allocates an empty frame.
  /// - Throws: "out of memory".
  init(av: Libav) throws(MediaFailure) {
    guard let pointer = av.av_frame_alloc() else { throw .unrescued("out of memory") }
    self.av = av
    self.pointer = pointer
  }

  /// Allocates a frame of `width` × `height` in `format`, its buffers allocated.
  /// - Throws: "out of memory".
  convenience init(width: Int32, height: Int32, format: AVPixelFormat, av: Libav) throws(MediaFailure) {
    try self.init(av: av)
    pointer.pointee.width = width
    pointer.pointee.height = height
    pointer.pointee.format = format.rawValue
    guard av.av_frame_get_buffer(pointer, 0) >= 0 else { throw .unrescued("out of memory") }
  }

  deinit {
    var frame: UnsafeMutablePointer<AVFrame>? = pointer
    av.av_frame_free(&frame)
  }
}

/// An `AVPacket` (and the data it references), freed when released.
final class OwnedPacket {
  private let av: Libav
  /// The packet.
  let pointer: UnsafeMutablePointer<AVPacket>

  /// Allocates an empty packet.
  /// - Throws: "out of memory".
  init(av: Libav) throws(MediaFailure) {
    guard let pointer = av.av_packet_alloc() else { throw .unrescued("out of memory") }
    self.av = av
    self.pointer = pointer
  }

  deinit {
    var packet: UnsafeMutablePointer<AVPacket>? = pointer
    av.av_packet_free(&packet)
  }
}

/// A `SwrContext`, set up by the caller through ``pointer``, freed when released (set up or not).
final class OwnedResampler {
  private let av: Libav
  /// The resampler; `nil` until `swr_alloc_set_opts2` makes it.
  var pointer: OpaquePointer?

  /// Holds no resampler yet.
  init(av: Libav) {
    self.av = av
  }

  deinit { av.swr_free(&pointer) }
}

/// An `AVAudioFifo` of planar float samples, freed when released.
final class OwnedAudioFifo {
  private let av: Libav
  /// The FIFO.
  let pointer: OpaquePointer

  /// Allocates a FIFO of `channels` channels of `format`.
  /// - Throws: "out of memory".
  init(format: AVSampleFormat, channels: Int32, av: Libav) throws(MediaFailure) {
    guard let pointer = av.av_audio_fifo_alloc(format, channels, 1) else { throw .unrescued("out of memory") }
    self.av = av
    self.pointer = pointer
  }

  deinit { av.av_audio_fifo_free(pointer) }
}
