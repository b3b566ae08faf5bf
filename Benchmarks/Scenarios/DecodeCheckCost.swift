import AttachmentKit
import Glibc

/// Scenario 15: what the decode check costs a miss (issue 52, item 3). The same accepted files
/// are validated with the probes alone and then, 300 ms later (the pool's spare started and
/// FFmpeg loaded, as between misses of real traffic), with the decode check (FFmpeg opens each
/// in that worker and decodes its first second), alternating; the
/// difference of the medians is the check's cost on a miss. A hit never pays it. Files: the
/// bundled AAC M4A (2 s), H.264 + AAC MP4 (160×120, 2 s) and ALAC CAF, and a 1280×720 H.264 +
/// AAC MP4 of 10 s made here (a GOP of 2 s).
enum DecodeCheckCostScenario {
  /// The report section.
  static let section =
    "15 decode check: an accepted file's validation, probes alone and with its first second decoded"

  /// Runs the scenario.
  /// - Throws: ``BenchError`` when a file is refused, or ffmpeg cannot make the 720p one.
  static func run(_ context: BenchContext, into report: inout Report) async throws {
    let directory = context.scratch + "/decode-check"
    try Files.makeDirectory(directory)
    let large = directory + "/h264-aac-720p-10s.mp4"
    let made = try Subprocess.run(
      [
        "ffmpeg", "-nostdin", "-loglevel", "error", "-y", "-f", "lavfi", "-i",
        "testsrc2=size=1280x720:rate=30",
        "-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000", "-t", "10", "-c:v", "libx264", "-preset",
        "veryfast", "-g", "60", "-pix_fmt", "yuv420p", "-c:a", "aac", "-movflags", "+faststart", large,
      ])
    guard made.status == 0 else { throw BenchError("ffmpeg could not make \(large)") }
    let media = RescueScenario.repositoryRoot() + "/Samples/media/"
    let files: [(key: String, name: String, path: String)] = [
      ("m4a_aac", "AAC M4A, 2 s", media + "aac-m4a.m4a"),
      ("mp4_small", "H.264 + AAC MP4, 160×120, 2 s", media + "mp4-video-audio.mp4"),
      ("caf_alac", "ALAC CAF", media + "caf-alac.caf"),
      ("mp4_720p", "H.264 + AAC MP4, 1280×720, 10 s", large),
    ]
    let probes = Validator()
    let checking = Validator(decodeCheck: DecodeCheckConfiguration())
    _ = try? checking.validate(file: files[0].path)  // the pool's first worker, and its spare
    for file in files {
      var alone: [Double] = []
      var checked: [Double] = []
      for _ in 0..<context.count(full: 15, quick: 7) {
        alone.append(try timed(probes, file.path))
        // Misses spaced as traffic spaces them: the pool's spare has started and loaded FFmpeg
        // (back to back, each check would also wait for the spare's start).
        usleep(300_000)
        checked.append(try timed(checking, file.path))
      }
      let without = Distribution(seconds: alone).percentile(50)
      let with = Distribution(seconds: checked).percentile(50)
      report.add(
        section, "\(file.name): probes alone, median", key: "decode_check_\(file.key)_probes_ms",
        value: without,
        unit: .milliseconds)
      report.add(
        section, "\(file.name): with the decode check, median", key: "decode_check_\(file.key)_ms",
        value: with,
        unit: .milliseconds)
    }
    RescueWorkers.finishIdleWorkers()
  }

  private static func timed(_ validator: Validator, _ path: String) throws -> Double {
    let started = ContinuousClock.now
    do {
      let validation = try validator.validate(file: path)
      if validation.warnings.contains(where: { $0.hasPrefix("Not opened by a decoder") }) {
        throw BenchError("\(path) was not decoded: \(validation.warnings)")
      }
    } catch let error as AttachmentError {
      throw BenchError("\(path) is refused: \(error)")
    }
    return (ContinuousClock.now - started).inSeconds
  }
}
