import CAV
import PosixLock

/// FFmpeg's libraries (libavformat 59, libavcodec 59, libavutil 57, libswscale 6,
/// libswresample 4), loaded on the first media rescue with `dlopen`: they map about 100 shared
/// libraries, which a cache hit, an image miss or an ordinary accepted video must never pay
/// for. Each function is resolved once into a pointer of its header's own type (see the `CAV`
/// shim); the properties carry the C names, so a call reads like FFmpeg's documentation.
struct Libav: @unchecked Sendable {
  /// The loaded libraries, or `nil` when one is not installed or lacks a function.
  static let shared: Libav? = Libav()

  // flat table: one property per FFmpeg function the rescue calls.
  let av_log_set_level: ak_av_log_set_level_fn
  /// `av_log_set_callback`, which a worker points at its library log (``LibraryLog``).
  let av_log_set_callback: UnsafeMutableRawPointer
  let av_strerror: ak_av_strerror_fn
  let av_dict_set: ak_av_dict_set_fn
  let av_dict_free: ak_av_dict_free_fn
  let av_packet_alloc: ak_av_packet_alloc_fn
  let av_packet_free: ak_av_packet_free_fn
  let av_packet_clone: ak_av_packet_clone_fn
  let av_packet_unref: ak_av_packet_unref_fn
  let av_packet_rescale_ts: ak_av_packet_rescale_ts_fn
  let av_frame_alloc: ak_av_frame_alloc_fn
  let av_frame_free: ak_av_frame_free_fn
  let av_frame_unref: ak_av_frame_unref_fn
  let av_frame_get_buffer: ak_av_frame_get_buffer_fn
  let av_channel_layout_default: ak_av_channel_layout_default_fn
  let av_channel_layout_copy: ak_av_channel_layout_copy_fn
  let av_channel_layout_uninit: ak_av_channel_layout_uninit_fn
  let av_audio_fifo_alloc: ak_av_audio_fifo_alloc_fn
  let av_audio_fifo_free: ak_av_audio_fifo_free_fn
  let av_audio_fifo_write: ak_av_audio_fifo_write_fn
  let av_audio_fifo_read: ak_av_audio_fifo_read_fn
  let av_audio_fifo_size: ak_av_audio_fifo_size_fn
  let av_rescale_q: ak_av_rescale_q_fn
  let av_display_rotation_get: ak_av_display_rotation_get_fn
  let av_stream_get_side_data: ak_av_stream_get_side_data_fn
  let av_stream_new_side_data: ak_av_stream_new_side_data_fn
  let avformat_alloc_context: ak_avformat_alloc_context_fn
  let avformat_open_input: ak_avformat_open_input_fn
  let av_find_input_format: ak_av_find_input_format_fn
  let avformat_find_stream_info: ak_avformat_find_stream_info_fn
  let avformat_close_input: ak_avformat_close_input_fn
  let av_read_frame: ak_av_read_frame_fn
  let av_find_best_stream: ak_av_find_best_stream_fn
  let avformat_alloc_output_context2: ak_avformat_alloc_output_context2_fn
  let avformat_free_context: ak_avformat_free_context_fn
  let avformat_new_stream: ak_avformat_new_stream_fn
  let avformat_write_header: ak_avformat_write_header_fn
  let av_interleaved_write_frame: ak_av_interleaved_write_frame_fn
  let av_write_trailer: ak_av_write_trailer_fn
  let avio_open2: ak_avio_open2_fn
  let avio_closep: ak_avio_closep_fn
  let avcodec_find_decoder: ak_avcodec_find_decoder_fn
  let avcodec_find_encoder: ak_avcodec_find_encoder_fn
  let avcodec_find_encoder_by_name: ak_avcodec_find_encoder_by_name_fn
  let avcodec_alloc_context3: ak_avcodec_alloc_context3_fn
  let avcodec_free_context: ak_avcodec_free_context_fn
  let avcodec_parameters_to_context: ak_avcodec_parameters_to_context_fn
  let avcodec_parameters_from_context: ak_avcodec_parameters_from_context_fn
  let avcodec_parameters_copy: ak_avcodec_parameters_copy_fn
  let avcodec_open2: ak_avcodec_open2_fn
  let avcodec_send_packet: ak_avcodec_send_packet_fn
  let avcodec_receive_frame: ak_avcodec_receive_frame_fn
  let avcodec_send_frame: ak_avcodec_send_frame_fn
  let avcodec_receive_packet: ak_avcodec_receive_packet_fn
  let avcodec_get_name: ak_avcodec_get_name_fn
  let sws_getContext: ak_sws_getContext_fn
  let sws_freeContext: ak_sws_freeContext_fn
  let sws_scale_frame: ak_sws_scale_frame_fn
  let swr_alloc_set_opts2: ak_swr_alloc_set_opts2_fn
  let swr_init: ak_swr_init_fn
  let swr_free: ak_swr_free_fn
  let swr_convert_frame: ak_swr_convert_frame_fn
  let swr_get_delay: ak_swr_get_delay_fn

  // flat table: each function resolved by name, one line each.
  private init?() {
    let names = [
      ["libavutil.so.57"], ["libavcodec.so.59"], ["libavformat.so.59"], ["libswscale.so.6"],
      ["libswresample.so.4"],
    ]
    let libraries = names.compactMap { SharedLibrary($0, lazy: true) }
    guard libraries.count == names.count else { return nil }
    struct Missing: Error {}
    func resolve<T>(_ name: String) throws(Missing) -> T {
      for library in libraries {
        if let function = library.function(name, as: T.self) { return function }
      }
      throw Missing()
    }
    func resolveSymbol(_ name: String) throws(Missing) -> UnsafeMutableRawPointer {
      for library in libraries {
        if let symbol = library.symbol(name) { return symbol }
      }
      throw Missing()
    }
    do {
      // flat table: the same names, resolved.
      av_log_set_level = try resolve("av_log_set_level")
      av_log_set_callback = try resolveSymbol("av_log_set_callback")
      av_strerror = try resolve("av_strerror")
      av_dict_set = try resolve("av_dict_set")
      av_dict_free = try resolve("av_dict_free")
      av_packet_alloc = try resolve("av_packet_alloc")
      av_packet_free = try resolve("av_packet_free")
      av_packet_clone = try resolve("av_packet_clone")
      av_packet_unref = try resolve("av_packet_unref")
      av_packet_rescale_ts = try resolve("av_packet_rescale_ts")
      av_frame_alloc = try resolve("av_frame_alloc")
      av_frame_free = try resolve("av_frame_free")
      av_frame_unref = try resolve("av_frame_unref")
      av_frame_get_buffer = try resolve("av_frame_get_buffer")
      av_channel_layout_default = try resolve("av_channel_layout_default")
      av_channel_layout_copy = try resolve("av_channel_layout_copy")
      av_channel_layout_uninit = try resolve("av_channel_layout_uninit")
      av_audio_fifo_alloc = try resolve("av_audio_fifo_alloc")
      av_audio_fifo_free = try resolve("av_audio_fifo_free")
      av_audio_fifo_write = try resolve("av_audio_fifo_write")
      av_audio_fifo_read = try resolve("av_audio_fifo_read")
      av_audio_fifo_size = try resolve("av_audio_fifo_size")
      av_rescale_q = try resolve("av_rescale_q")
      av_display_rotation_get = try resolve("av_display_rotation_get")
      av_stream_get_side_data = try resolve("av_stream_get_side_data")
      av_stream_new_side_data = try resolve("av_stream_new_side_data")
      avformat_alloc_context = try resolve("avformat_alloc_context")
      avformat_open_input = try resolve("avformat_open_input")
      av_find_input_format = try resolve("av_find_input_format")
      avformat_find_stream_info = try resolve("avformat_find_stream_info")
      avformat_close_input = try resolve("avformat_close_input")
      av_read_frame = try resolve("av_read_frame")
      av_find_best_stream = try resolve("av_find_best_stream")
      avformat_alloc_output_context2 = try resolve("avformat_alloc_output_context2")
      avformat_free_context = try resolve("avformat_free_context")
      avformat_new_stream = try resolve("avformat_new_stream")
      avformat_write_header = try resolve("avformat_write_header")
      av_interleaved_write_frame = try resolve("av_interleaved_write_frame")
      av_write_trailer = try resolve("av_write_trailer")
      avio_open2 = try resolve("avio_open2")
      avio_closep = try resolve("avio_closep")
      avcodec_find_decoder = try resolve("avcodec_find_decoder")
      avcodec_find_encoder = try resolve("avcodec_find_encoder")
      avcodec_find_encoder_by_name = try resolve("avcodec_find_encoder_by_name")
      avcodec_alloc_context3 = try resolve("avcodec_alloc_context3")
      avcodec_free_context = try resolve("avcodec_free_context")
      avcodec_parameters_to_context = try resolve("avcodec_parameters_to_context")
      avcodec_parameters_from_context = try resolve("avcodec_parameters_from_context")
      avcodec_parameters_copy = try resolve("avcodec_parameters_copy")
      avcodec_open2 = try resolve("avcodec_open2")
      avcodec_send_packet = try resolve("avcodec_send_packet")
      avcodec_receive_frame = try resolve("avcodec_receive_frame")
      avcodec_send_frame = try resolve("avcodec_send_frame")
      avcodec_receive_packet = try resolve("avcodec_receive_packet")
      avcodec_get_name = try resolve("avcodec_get_name")
      sws_getContext = try resolve("sws_getContext")
      sws_freeContext = try resolve("sws_freeContext")
      sws_scale_frame = try resolve("sws_scale_frame")
      swr_alloc_set_opts2 = try resolve("swr_alloc_set_opts2")
      swr_init = try resolve("swr_init")
      swr_free = try resolve("swr_free")
      swr_convert_frame = try resolve("swr_convert_frame")
      swr_get_delay = try resolve("swr_get_delay")
    } catch {
      return nil
    }
    // FFmpeg logs to standard error unless told not to; its messages reach callers as errors.
    av_log_set_level(AV_LOG_QUIET)
  }

  /// FFmpeg's message for an error code.
  func message(_ code: Int32) -> String {
    var buffer = [CChar](repeating: 0, count: 256)
    _ = av_strerror(code, &buffer, buffer.count)
    return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
  }

  /// The codec's short name (`h264`, `vp9`, `flac`).
  func name(of codec: AVCodecID) -> String {
    avcodec_get_name(codec).map { String(cString: $0) } ?? "unknown"
  }
}
