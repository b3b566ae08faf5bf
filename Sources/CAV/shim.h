#ifndef ATTACHMENTKIT_CAV_SHIM_H
#define ATTACHMENTKIT_CAV_SHIM_H

// FFmpeg's types (libavformat, libavcodec, libavutil, libswscale, libswresample 5.1), for the
// media rescue. The libraries are loaded at run time (dlopen) on the first media rescue, so
// nothing here is linked: each function is resolved by name into a pointer of the type below,
// taken from the header's own declaration (`__typeof__` is not evaluated). No logic lives here.

#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <libavutil/audio_fifo.h>
#include <libavutil/channel_layout.h>
#include <libavutil/dict.h>
#include <libavutil/display.h>
#include <libavutil/error.h>
#include <libavutil/frame.h>
#include <libavutil/log.h>
#include <libavutil/opt.h>
#include <libswresample/swresample.h>
#include <libswscale/swscale.h>

#define AK_AV_FUNCTION(name) typedef __typeof__(&name) ak_##name##_fn;

// flat table: every FFmpeg function the rescue calls.
AK_AV_FUNCTION(av_log_set_level)
AK_AV_FUNCTION(av_strerror)
AK_AV_FUNCTION(av_dict_set)
AK_AV_FUNCTION(av_dict_free)
AK_AV_FUNCTION(av_packet_alloc)
AK_AV_FUNCTION(av_packet_free)
AK_AV_FUNCTION(av_packet_clone)
AK_AV_FUNCTION(av_packet_unref)
AK_AV_FUNCTION(av_packet_rescale_ts)
AK_AV_FUNCTION(av_frame_alloc)
AK_AV_FUNCTION(av_frame_free)
AK_AV_FUNCTION(av_frame_unref)
AK_AV_FUNCTION(av_frame_get_buffer)
AK_AV_FUNCTION(av_channel_layout_default)
AK_AV_FUNCTION(av_channel_layout_copy)
AK_AV_FUNCTION(av_channel_layout_uninit)
AK_AV_FUNCTION(av_audio_fifo_alloc)
AK_AV_FUNCTION(av_audio_fifo_free)
AK_AV_FUNCTION(av_audio_fifo_write)
AK_AV_FUNCTION(av_audio_fifo_read)
AK_AV_FUNCTION(av_audio_fifo_size)
AK_AV_FUNCTION(av_rescale_q)
AK_AV_FUNCTION(av_display_rotation_get)
AK_AV_FUNCTION(av_stream_get_side_data)
AK_AV_FUNCTION(av_stream_new_side_data)
AK_AV_FUNCTION(avformat_alloc_context)
AK_AV_FUNCTION(avformat_open_input)
AK_AV_FUNCTION(av_find_input_format)
AK_AV_FUNCTION(avformat_find_stream_info)
AK_AV_FUNCTION(avformat_close_input)
AK_AV_FUNCTION(av_read_frame)
AK_AV_FUNCTION(av_find_best_stream)
AK_AV_FUNCTION(avformat_alloc_output_context2)
AK_AV_FUNCTION(avformat_free_context)
AK_AV_FUNCTION(avformat_new_stream)
AK_AV_FUNCTION(avformat_write_header)
AK_AV_FUNCTION(av_interleaved_write_frame)
AK_AV_FUNCTION(av_write_trailer)
AK_AV_FUNCTION(avio_open2)
AK_AV_FUNCTION(avio_closep)
AK_AV_FUNCTION(avcodec_find_decoder)
AK_AV_FUNCTION(avcodec_find_encoder)
AK_AV_FUNCTION(avcodec_find_encoder_by_name)
AK_AV_FUNCTION(avcodec_alloc_context3)
AK_AV_FUNCTION(avcodec_free_context)
AK_AV_FUNCTION(avcodec_parameters_to_context)
AK_AV_FUNCTION(avcodec_parameters_from_context)
AK_AV_FUNCTION(avcodec_parameters_copy)
AK_AV_FUNCTION(avcodec_open2)
AK_AV_FUNCTION(avcodec_send_packet)
AK_AV_FUNCTION(avcodec_receive_frame)
AK_AV_FUNCTION(avcodec_send_frame)
AK_AV_FUNCTION(avcodec_receive_packet)
AK_AV_FUNCTION(avcodec_get_name)
AK_AV_FUNCTION(sws_getContext)
AK_AV_FUNCTION(sws_freeContext)
AK_AV_FUNCTION(sws_scale_frame)
AK_AV_FUNCTION(swr_alloc_set_opts2)
AK_AV_FUNCTION(swr_init)
AK_AV_FUNCTION(swr_free)
AK_AV_FUNCTION(swr_convert_frame)
AK_AV_FUNCTION(swr_get_delay)

/// AVERROR_EOF, a macro Swift cannot import.
static inline int ak_averror_eof(void) { return AVERROR_EOF; }
/// AVERROR(EAGAIN): the codec wants more input, or has no output yet.
static inline int ak_averror_eagain(void) { return AVERROR(EAGAIN); }
/// AVERROR_EXIT: returned by a call the interrupt callback stopped.
static inline int ak_averror_exit(void) { return AVERROR_EXIT; }
/// AV_NOPTS_VALUE: no timestamp.
static inline int64_t ak_av_nopts_value(void) { return AV_NOPTS_VALUE; }

#endif
