import TestTraits
import Testing

@testable import AttachmentKit

/// ``MediaPlan`` as a value: the cheapest action for each kind of source, without FFmpeg.
@Suite("Media rescue: the plan", .cpuBound)
struct MediaPlanTests {
  private static func video(_ codec: String, _ width: Int, _ height: Int) -> MediaSource.Stream {
    MediaSource.Stream(
      index: 0, codec: codec, decodable: true, width: width, height: height, framesPerSecond: 30)
  }

  private static func audio(_ codec: String, decodable: Bool = true) -> MediaSource.Stream {
    MediaSource.Stream(index: 1, codec: codec, decodable: decodable, sampleRate: 48_000, channels: 2)
  }

  private static func plan(
    _ demuxer: String, seconds: Double, bytes: Int64 = 1_000_000, video: MediaSource.Stream? = nil,
    audio: MediaSource.Stream? = nil, refusal: AttachmentError.Code = .unsupportedType
  ) -> Result<MediaPlan, MediaFailure> {
    MediaPlan.make(
      for: MediaSource(demuxer: demuxer, durationSeconds: seconds, bytes: bytes, video: video, audio: audio),
      refusal: Refusal(AttachmentError(refusal, "refused"), facts: MediaFacts(bytes: bytes)),
      limits: ValidationLimits(),
      configuration: MediaRescueConfiguration())
  }

  @Test("a long H.264 MP4 is trimmed by stream copy; H.264 in Matroska is re-wrapped, its Opus transcoded")
  func copies() throws {
    let trimmed = try Self.plan(
      "mov,mp4,m4a,3gp,3g2,mj2", seconds: 45, video: Self.video("h264", 1280, 720), audio: Self.audio("aac"),
      refusal: .tooLong
    ).get()
    #expect(
      trimmed == MediaPlan(output: .mp4, video: .copy, audio: .copy, endSeconds: 30, actions: [.trimmed]))
    let rewrapped = try Self.plan(
      "matroska,webm", seconds: 10, video: Self.video("h264", 640, 360), audio: Self.audio("opus")
    ).get()
    #expect(rewrapped.video == .copy && rewrapped.audio == .transcode(bitrate: 128_000))
    #expect(rewrapped.actions == [.rewrapped, .transcoded])
  }

  @Test("VP9 is transcoded into 1280×720 (720×1280 for portrait), trimmed to the limit")
  func transcodes() throws {
    let wide = try Self.plan("matroska,webm", seconds: 45, video: Self.video("vp9", 1920, 1080)).get()
    #expect(wide.video == .transcode(width: 1280, height: 720, bitrate: nil))
    #expect(wide.endSeconds == 30 && wide.actions == [.trimmed, .transcoded])
    let tall = try Self.plan("matroska,webm", seconds: 5, video: Self.video("av1", 1080, 1920)).get()
    #expect(tall.video == .transcode(width: 720, height: 1280, bitrate: nil))
    let small = try Self.plan("avi", seconds: 5, video: Self.video("mpeg4", 161, 121)).get()
    #expect(small.video == .transcode(width: 160, height: 120, bitrate: nil))  // even sides, never upscaled
  }

  @Test("a video over its byte limit is re-encoded at a bitrate that fits")
  func shrinks() throws {
    let plan = try Self.plan(
      "mov,mp4,m4a,3gp,3g2,mj2", seconds: 20, bytes: 80_000_000, video: Self.video("h264", 1280, 720),
      refusal: .tooLarge
    ).get()
    #expect(plan.video == .transcode(width: 1280, height: 720, bitrate: 18_400_000))
    #expect(plan.actions == [.shrunk])
    // With audio, the video gets what the limit leaves after it: AAC copied at its declared
    // 192 kb/s, Opus transcoded at 128 kb/s
    var aac = Self.audio("aac")
    aac.bitrate = 192_000
    let copied = try Self.plan(
      "mov,mp4,m4a,3gp,3g2,mj2", seconds: 20, bytes: 80_000_000, video: Self.video("h264", 1280, 720),
      audio: aac, refusal: .tooLarge
    ).get()
    #expect(
      copied.video == .transcode(width: 1280, height: 720, bitrate: 18_208_000) && copied.audio == .copy)
    let opus = try Self.plan(
      "matroska,webm", seconds: 20, bytes: 80_000_000, video: Self.video("h264", 1280, 720),
      audio: Self.audio("opus"), refusal: .tooLarge
    ).get()
    #expect(opus.video == .transcode(width: 1280, height: 720, bitrate: 18_272_000))
    #expect(opus.actions == [.shrunk, .transcoded])
  }

  @Test(
    "audio: PCM AIFF re-wrapped in CAF; FLAC to AAC; a long MP3 re-encoded to fit, a very long one trimmed too"
  )
  func audio() throws {
    #expect(try Self.plan("aiff", seconds: 1, audio: Self.audio("pcm_s16be")).get().output == .caf)
    let flac = try Self.plan("flac", seconds: 60, audio: Self.audio("flac")).get()
    #expect(
      flac
        == MediaPlan(
          output: .m4a, video: nil, audio: .transcode(bitrate: 128_000), endSeconds: nil,
          actions: [.transcoded]))
    // 6 minutes at 192 kb/s is 8.6 MB: 5 MB × 8 × 0.92 / 360 s ≈ 102 kb/s fits.
    let mp3 = try Self.plan(
      "mp3", seconds: 360, bytes: 8_640_000, audio: Self.audio("mp3"), refusal: .tooLarge
    ).get()
    #expect(mp3.audio == .transcode(bitrate: 102_222) && mp3.endSeconds == nil)
    // An hour does not fit at 48 kb/s: trimmed to what does.
    let hour = try Self.plan(
      "mp3", seconds: 3600, bytes: 86_400_000, audio: Self.audio("mp3"), refusal: .tooLarge
    ).get()
    #expect(hour.audio == .transcode(bitrate: MediaPlan.minimumAudioBitrate))
    #expect(hour.endSeconds.map { Int($0) } == 766 && hour.actions == [.transcoded, .trimmed])
  }

  @Test("nothing to deliver: no stream, or no allowed decoder")
  func refuses() {
    guard case .failure(.unrescued) = Self.plan("ogg", seconds: 1) else {
      Issue.record("a source without streams was planned")
      return
    }
    let undecodable = Self.plan("ogg", seconds: 1, audio: Self.audio("speex", decodable: false))
    guard case .failure(.unrescued(let reason)) = undecodable else {
      Issue.record("an undecodable stream was planned")
      return
    }
    #expect(reason.contains("speex"))
  }

  @Test(
    "a transcode's estimate: duration cut at the limit × frame rate × output and source megapixels; copies none"
  )
  func estimates() throws {
    let source = { (seconds: Double, video: MediaSource.Stream, audio: MediaSource.Stream?) in
      MediaSource(
        demuxer: "matroska,webm", durationSeconds: seconds, bytes: 1_000_000, video: video, audio: audio)
    }
    let estimate = { (source: MediaSource) throws -> TranscodeEstimate? in
      let plan = try MediaPlan.make(
        for: source,
        refusal: Refusal(AttachmentError(.unsupportedType, "refused"), facts: MediaFacts(bytes: 1)),
        limits: ValidationLimits(),
        configuration: MediaRescueConfiguration()
      ).get()
      return TranscodeEstimate(
        plan: plan, source: source, limits: ValidationLimits(), cost: MediaTranscodeCost())
    }
    // 45 s of 720p VP9 + Opus: 30 s × 0.9216 MP × (0.25 + 0.06) s + 30 s × 0.02 s
    let vp9 = try #require(try estimate(source(45, Self.video("vp9", 1280, 720), Self.audio("opus"))))
    #expect(vp9.mediaSeconds == 30)
    #expect(abs(vp9.seconds - (30 * 0.9216 * 0.31 + 0.6)) < 1e-9)
    #expect(vp9.reason(left: 2.94) == "a transcode of 30 s would take about 9.2 s, 2.9 s are left")
    // 4K is encoded at 1280×720 but decoded at its own size; no declared duration: the limit
    let big = try #require(try estimate(source(0, Self.video("av1", 3840, 2160), nil)))
    #expect(abs(big.seconds - 30 * (0.9216 * 0.25 + 8.2944 * 0.06)) < 1e-9)
    // H.264 re-wrapped with its AAC: nothing to estimate
    #expect(try estimate(source(10, Self.video("h264", 640, 360), Self.audio("aac"))) == nil)
  }
}
