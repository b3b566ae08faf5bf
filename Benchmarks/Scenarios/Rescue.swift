import Glibc

/// Scenario 10: rescue (issue 15) against libvips' own command-line tool on the same files.
///
/// Each case runs `attachkit rescue FILE -o OUT` (the release build next to the benchmark:
/// validation, the libvips thumbnail, re-validation) and `vipsthumbnail FILE --size 4096x4096
/// -o OUT[Q=85,strip]` (the same box, quality and metadata), alternating which goes first, each
/// a new process. Reported: median wall time of each and their ratio, and the median peak RSS
/// (the command's own, through GNU time: see ``Subprocess/measurePeak(_:)``) of each and their
/// ratio. The large files come from
/// scripts/make-large-samples.sh (generated here; about 10 s).
enum RescueScenario {
  /// The report section.
  static let section = "10 rescue (vs vipsthumbnail)"

  /// The cases: a report key, a description, and the file (large samples, then committed ones).
  static let cases: [(key: String, name: String, file: String)] = [
    ("rescue_24mp", "24 MP JPEG downscale", "large:jpeg-24mp.jpg"),
    ("rescue_24mp_orient6", "24 MP JPEG, EXIF orientation 6", "large:jpeg-24mp-orientation-6.jpg"),
    ("rescue_png16", "5000×4000 16-bit PNG", "large:png16-over-limits.png"),
    ("rescue_12mp_12mb", "12 MP JPEG of 12 MB", "large:jpeg-12mp-over-10mb.jpg"),
    ("rescue_heic", "64×48 HEIC", "media:heic-still.heic"),
    ("rescue_webp", "64×48 WebP", "media:webp-lossy.webp"),
  ]

  /// Runs every case.
  /// - Throws: ``BenchError`` when a tool is missing or a run fails.
  static func run(_ context: BenchContext, into report: inout Report) async throws {
    guard let binary = BatchScenario.commandLineBinary(context), access(binary, X_OK) == 0 else {
      log("rescue: no attachkit binary next to the benchmark; skipping")
      return
    }
    guard Subprocess.firstLine(of: ["vipsthumbnail", "--version"]) != nil else {
      log("rescue: vipsthumbnail is not installed (apt-get install -y libvips-tools); skipping")
      return
    }
    let root = repositoryRoot()
    let large = context.scratch + "/rescue-samples"
    let made = try Subprocess.run(["bash", root + "/scripts/make-large-samples.sh", large])
    guard made.status == 0 else { throw BenchError("make-large-samples.sh exited \(made.status)") }
    let output = context.scratch + "/rescue-out"
    try Files.makeDirectory(output)
    let repetitions = context.count(full: 7, quick: 3)
    for item in cases {
      let file =
        item.file.hasPrefix("large:")
        ? large + "/" + item.file.dropFirst(6) : root + "/Samples/media/" + item.file.dropFirst(6)
      let ours = [binary, "rescue", "--quiet", file, "--output", output + "/ours"]
      let theirs = ["vipsthumbnail", file, "--size", "4096x4096", "-o", output + "/theirs.jpg[Q=85,strip]"]
      let medians = try Alternation.measure(ours: ours, theirs: theirs, repetitions: repetitions)
      let (oursTime, theirsTime) = (medians.oursMilliseconds, medians.theirsMilliseconds)
      let (oursPeak, theirsPeak) = (medians.oursPeakBytes, medians.theirsPeakBytes)
      report.add(
        section, "\(item.name): attachkit rescue, median wall time", key: item.key + "_ms", value: oursTime,
        unit: .milliseconds)
      report.add(
        section, "\(item.name): vipsthumbnail, median wall time", key: item.key + "_vips_ms",
        value: theirsTime, unit: .milliseconds)
      report.add(
        section, "\(item.name): attachkit rescue, peak RSS", key: item.key + "_rss", value: oursPeak,
        unit: .mebibytes)
      report.add(
        section, "\(item.name): vipsthumbnail, peak RSS", key: item.key + "_vips_rss", value: theirsPeak,
        unit: .mebibytes)
      let is24 = item.key == "rescue_24mp"
      report.addRatio(
        "rescue \(item.name) / vipsthumbnail (wall time)", key: item.key + "_ratio_vips", ours: oursTime,
        theirs: theirsTime, goal: is24 ? 1.0 : nil)
      report.addRatio(
        "rescue \(item.name) / vipsthumbnail (peak RSS)", key: item.key + "_rss_ratio_vips", ours: oursPeak,
        theirs: theirsPeak, goal: is24 ? 1.2 : nil, unit: .bytes)
    }
  }

  /// The repository root, from this file's path (Benchmarks/Scenarios/Rescue.swift).
  static func repositoryRoot() -> String {
    var path = #filePath
    for _ in 0..<3 {
      guard let slash = path.lastIndex(of: "/") else { break }
      path = String(path[..<slash])
    }
    return path
  }
}
