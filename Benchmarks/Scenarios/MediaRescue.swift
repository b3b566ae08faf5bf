import Glibc

/// Scenario 12: media rescue (issue 24) against the `ffmpeg` command doing the same job with
/// the same settings, on the same files.
///
/// Each case runs `attachkit rescue FILE -o OUT` (the release build: validation, the FFmpeg
/// work through its libraries, re-validation) and the equivalent `ffmpeg` command line,
/// alternating which goes first, each a new process. Reported: median wall time and median
/// peak RSS (through GNU time) of each, and their ratios. The sources are generated here with
/// `ffmpeg` (about 15 s): a 45 s 1280×720 30 fps VP9 + Opus WebM (transcoded to 30 s of H.264
/// `veryfast` CRF 23 + AAC-LC 128 kb/s, moov first) and a 45 s H.264 + AAC MP4 with a keyframe
/// every 2 s (cut to 30 s by stream copy); its first 28 s as MPEG-TS, re-wrapped in MP4; the
/// poster of the WebM under a deadline too short to transcode it, against `ffmpeg -frames:v 1`
/// writing its first frame as a JPEG; and issue 42's kinds, each transcoded as the `ffmpeg`
/// command does with the same settings: 20 s CIF FLV (Sorenson H.263 + Flash ADPCM), ASF (WMV 8
/// + WMA 2) and 3GP (H.263 + AAC), 60 s of stereo FLAC to AAC in M4A, and the shrink of a
/// 60 MB 20 s 1080p H.264 video under the 50 MB limit (720p at the bitrate that fits, audio
/// copied). Last, `serve --rescue`'s peak RSS while it transcodes two WebMs at once
/// (``ServeTranscodeMemory``).
enum MediaRescueScenario {
  /// The report section.
  static let section = "12 media rescue (vs ffmpeg)"

  /// Runs both cases.
  /// - Throws: ``BenchError`` when a run fails.
  static func run(_ context: BenchContext, into report: inout Report) async throws {
    guard let binary = BatchScenario.commandLineBinary(context), access(binary, X_OK) == 0 else {
      log("mediarescue: no attachkit binary next to the benchmark; skipping")
      return
    }
    guard Subprocess.firstLine(of: ["ffmpeg", "-version"]) != nil else {
      log("mediarescue: ffmpeg is not installed (apt-get install -y ffmpeg); skipping")
      return
    }
    let directory = context.scratch + "/media-rescue"
    try Files.makeDirectory(directory)
    let webm = directory + "/vp9-opus-720p-45s.webm"
    let mp4 = directory + "/h264-aac-45s-gop2.mp4"
    try generate(
      webm,
      [
        "-f", "lavfi", "-i", "testsrc2=size=1280x720:rate=30", "-f", "lavfi", "-i",
        "sine=frequency=440:sample_rate=48000",
        "-t", "45", "-c:v", "libvpx-vp9", "-deadline", "realtime", "-cpu-used", "8", "-b:v", "1500k",
        "-row-mt", "1",
        "-c:a", "libopus", "-b:a", "96k",
      ])
    try generate(
      mp4,
      [
        "-f", "lavfi", "-i", "testsrc2=size=1280x720:rate=30", "-f", "lavfi", "-i",
        "sine=frequency=440:sample_rate=48000",
        "-t", "45", "-c:v", "libx264", "-preset", "ultrafast", "-g", "60", "-pix_fmt", "yuv420p", "-c:a",
        "aac",
        "-movflags", "+faststart",
      ])
    // An MPEG-TS of the MP4's first 28 s (under the duration limit): a re-wrap by stream copy.
    let ts = directory + "/h264-aac-28s.ts"
    try generate(ts, ["-i", mp4, "-t", "28", "-c", "copy", "-f", "mpegts"])
    // Issue 42's transcoded kinds, 20 s each, as phones, Flash and Windows Media wrote them,
    // and a minute of FLAC audio: each decoded through its own allowed decoder.
    let kinds = directory + "/kinds"
    try Files.makeDirectory(kinds)
    let flv = kinds + "/sorenson-adpcm-20s.flv"
    let wmv = kinds + "/wmv2-wma2-20s.wmv"
    let threeGP = kinds + "/h263-aac-20s.3gp"
    let flac = kinds + "/stereo-60s.flac"
    let picture = [
      "-f", "lavfi", "-i", "testsrc2=size=352x288:rate=25", "-f", "lavfi", "-i", "sine=frequency=440",
    ]
    try generate(
      flv, picture + ["-t", "20", "-c:v", "flv", "-b:v", "600k", "-c:a", "adpcm_swf", "-ar", "22050"])
    try generate(wmv, picture + ["-t", "20", "-c:v", "wmv2", "-b:v", "600k", "-c:a", "wmav2", "-b:a", "64k"])
    try generate(
      threeGP, picture + ["-t", "20", "-c:v", "h263", "-b:v", "600k", "-c:a", "aac", "-ar", "16000"])
    try generate(
      flac,
      ["-f", "lavfi", "-i", "sine=frequency=440:sample_rate=44100", "-ac", "2", "-t", "60", "-c:a", "flac"])
    // The shrink: 20 s of noisy 1080p H.264 at 24 Mb/s (about 60 MB) over the 50 MB video limit.
    let big = kinds + "/h264-1080p-24M-20s.mp4"
    try generate(
      big,
      [
        "-f", "lavfi", "-i", "testsrc2=size=1920x1080:rate=30,noise=alls=12:allf=t", "-f", "lavfi", "-i",
        "sine=frequency=440:sample_rate=48000", "-t", "20", "-c:v", "libx264", "-preset", "ultrafast", "-b:v",
        "24M", "-maxrate", "24M", "-bufsize", "24M", "-pix_fmt", "yuv420p", "-c:a", "aac", "-b:a", "128k",
        "-movflags", "+faststart",
      ])
    let quiet = ["ffmpeg", "-nostdin", "-loglevel", "error", "-y"]
    // The rescue's shrink bitrate: 92 % of 50 MB over 20 s, less the copied audio's 128 kb/s.
    let payload: Int = 50_000_000 * 8 * 92 / 100 / 20
    let shrinkRate = String(payload - 128_000)
    let shrink =
      quiet + [
        "-i", big, "-vf", "scale=1280:720", "-c:v", "libx264", "-preset", "veryfast", "-b:v", shrinkRate,
        "-maxrate", shrinkRate, "-bufsize", shrinkRate, "-pix_fmt", "yuv420p", "-profile:v", "high", "-c:a",
        "copy", "-movflags", "+faststart", directory + "/theirs.mp4",
      ]
    /// The ffmpeg command doing a transcode of `source` with the rescue's settings.
    func transcoded(_ source: String) -> [String] {
      quiet + [
        "-i", source, "-c:v", "libx264", "-preset", "veryfast", "-crf", "23", "-pix_fmt", "yuv420p",
        "-profile:v", "high", "-c:a", "aac", "-b:a", "128k", "-movflags", "+faststart",
        directory + "/theirs.mp4",
      ]
    }
    let audio =
      quiet + [
        "-i", flac, "-c:a", "aac", "-b:a", "128k", "-movflags", "+faststart", directory + "/theirs.m4a",
      ]
    let transcode =
      quiet + [
        "-i", webm, "-t", "30", "-c:v", "libx264", "-preset", "veryfast", "-crf", "23", "-pix_fmt", "yuv420p",
        "-profile:v", "high", "-c:a", "aac", "-b:a", "128k", "-movflags", "+faststart",
        directory + "/theirs.mp4",
      ]
    let trim =
      quiet + ["-i", mp4, "-t", "30", "-c", "copy", "-movflags", "+faststart", directory + "/theirs.mp4"]
    let rewrap = quiet + ["-i", ts, "-c", "copy", "-movflags", "+faststart", directory + "/theirs.mp4"]
    // The poster: a deadline of 4 s leaves the transcode's estimate (about 14 s) no room, so the
    // rescue falls back to a JPEG of the first frame that is not nearly black (here the first).
    let poster = quiet + ["-i", webm, "-frames:v", "1", "-q:v", "3", directory + "/theirs.jpg"]
    let cases:
      [(key: String, name: String, source: String, options: [String], theirs: [String], repetitions: Int)] = [
        (
          "media_transcode_720p", "45 s 720p VP9+Opus → 30 s H.264+AAC", webm, [], transcode,
          context.count(full: 3, quick: 1)
        ),
        (
          "media_trim_copy", "45 s H.264 MP4 → 30 s by stream copy", mp4, [], trim,
          context.count(full: 9, quick: 7)
        ),
        (
          "media_rewrap_ts", "28 s H.264+AAC MPEG-TS → MP4 by stream copy", ts, [], rewrap,
          context.count(full: 9, quick: 5)
        ),
        (
          "media_poster", "45 s 720p VP9 → JPEG poster (deadline 4 s)", webm, ["--deadline", "4"], poster,
          context.count(full: 9, quick: 5)
        ),
        (
          "media_transcode_flv", "20 s CIF FLV (Sorenson H.263 + Flash ADPCM) → H.264+AAC", flv, [],
          transcoded(flv), context.count(full: 5, quick: 3)
        ),
        (
          "media_transcode_wmv", "20 s CIF ASF (WMV 8 + WMA 2) → H.264+AAC", wmv, [], transcoded(wmv),
          context.count(full: 5, quick: 3)
        ),
        (
          "media_transcode_3gp", "20 s CIF 3GP (H.263 + AAC) → H.264+AAC", threeGP, [], transcoded(threeGP),
          context.count(full: 5, quick: 3)
        ),
        (
          "media_transcode_flac", "60 s stereo FLAC → AAC-LC in M4A", flac, [], audio,
          context.count(full: 5, quick: 3)
        ),
        (
          "media_shrink", "20 s 1080p H.264, 60 MB → under 50 MB at 720p (shrink)", big,
          ["--deadline", "120"],
          shrink, context.count(full: 3, quick: 1)
        ),
      ]
    for item in cases {
      let ours =
        [binary, "rescue", "--quiet"] + item.options + [item.source, "--output", directory + "/ours"]
      let medians = try Alternation.measure(ours: ours, theirs: item.theirs, repetitions: item.repetitions)
      let (oursTime, theirsTime) = (medians.oursMilliseconds, medians.theirsMilliseconds)
      let (oursPeak, theirsPeak) = (medians.oursPeakBytes, medians.theirsPeakBytes)
      report.add(
        section, "\(item.name): attachkit rescue, median wall time", key: item.key + "_ms", value: oursTime,
        unit: .milliseconds)
      report.add(
        section, "\(item.name): ffmpeg, median wall time", key: item.key + "_ffmpeg_ms", value: theirsTime,
        unit: .milliseconds)
      report.add(
        section, "\(item.name): attachkit rescue, peak RSS", key: item.key + "_rss", value: oursPeak,
        unit: .mebibytes)
      report.add(
        section, "\(item.name): ffmpeg, peak RSS", key: item.key + "_ffmpeg_rss", value: theirsPeak,
        unit: .mebibytes)
      report.addRatio(
        "media rescue \(item.name) / ffmpeg (wall time)", key: item.key + "_ratio_ffmpeg", ours: oursTime,
        theirs: theirsTime, goal: 1.0)
      let isTranscode = item.key == "media_transcode_720p"
      report.addRatio(
        "media rescue \(item.name) / ffmpeg (peak RSS)", key: item.key + "_rss_ratio_ffmpeg", ours: oursPeak,
        theirs: theirsPeak, goal: isTranscode ? 1.2 : nil, unit: .bytes)
    }
    try ServeTranscodeMemory.run(source: webm, binary: binary, context, into: &report)
  }

  private static func generate(_ path: String, _ arguments: [String]) throws {
    let made = try Subprocess.run(["ffmpeg", "-nostdin", "-loglevel", "error", "-y"] + arguments + [path])
    guard made.status == 0 else { throw BenchError("ffmpeg could not make \(path) (status \(made.status))") }
  }
}
