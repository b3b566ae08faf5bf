import CAV
import Foundation
import TestSupport
import TestTraits
import Testing

@testable import AttachmentKit

/// Issue 42, item 3: HEIF and AVIF image sequences (which libheif 1.15 does not read, FFmpeg's
/// mov demuxer does) become an animated GIF within the animation budget, else a still of the
/// first frame. Real samples from `scripts/make-samples.sh`, real FFmpeg in a rescue worker.
@Suite("Poster: image sequences and stills only FFmpeg reads", .cpuBound)
struct SequenceAnimationTests {
  /// The poster's settings with a minute for its work: what these tests check is what it
  /// delivers, not its time (its own budget has a test of its own in `PosterRescuerTests`). In a
  /// full parallel run the wait for a worker, which other tests keep busy, counts against that
  /// budget: 9 s ran out there once, and the AVIF sequence kept the image rescue's refusal.
  static func unhurried() -> PosterConfiguration {
    var poster = PosterConfiguration()
    poster.maximumSeconds = 60
    poster.maximumAnimationSeconds = 60
    return poster
  }

  /// The delays of `path`'s frames, in centiseconds, from its Graphic Control Extensions
  /// (`21 F9 04 <flags> <delay, little-endian>`).
  static func gifDelays(_ path: String) throws -> [Int] {
    let bytes = Array(try Data(contentsOf: URL(fileURLWithPath: path)))
    var delays: [Int] = []
    for index in 0..<max(0, bytes.count - 6)
    where bytes[index] == 0x21 && bytes[index + 1] == 0xF9 && bytes[index + 2] == 4 {
      delays.append(Int(bytes[index + 4]) | Int(bytes[index + 5]) << 8)
    }
    return delays
  }

  @Test(
    "every frame of an AVIF, HEIF or HEIC sequence, at its own 10 fps, looping",
    arguments: [
      ("avif-sequence.avif", "image/avif"), ("heif-sequence.heifs", "image/heif-sequence"),
      ("heic-sequence.heics", "image/heic-sequence"),
    ])
  func animates(file: String, from: String) async throws {
    let scratch = try ScratchDirectory("sequence-gif")
    defer { scratch.remove() }
    let output = scratch.path + "/animated.gif"
    let (result, _) = await PosterRescuerTests.rescue(
      Samples.path(file), into: output, rescuers: StandardRescuers.make(poster: Self.unhurried()),
      seconds: 120)
    let validation = try result.get()
    #expect(validation.type == .gif && validation.width == 64 && validation.height == 48)
    #expect(validation.frames == 5)
    let rescued = try #require(validation.rescued)
    #expect(rescued.rescuer == "poster" && rescued.actions == [.converted] && rescued.from == from)
    #expect(try Self.gifDelays(output) == [10, 10, 10, 10, 10])
    // Each frame shows its own picture (the sample's counter moves), as the ffmpeg command
    // decodes the GIF: not the first frame again with empty changes.
    let hashes = try await Self.frameHashes(output, in: scratch.path)
    #expect(hashes.count == 5 && Set(hashes).count == 5, "\(hashes)")
    // NETSCAPE2.0 application extension: the animation loops.
    let bytes = try Data(contentsOf: URL(fileURLWithPath: output))
    #expect(bytes.range(of: Data("NETSCAPE2.0".utf8)) != nil)
  }

  /// The MD5 of each frame of `path` as the `ffmpeg` command decodes it (`-f framemd5`).
  static func frameHashes(_ path: String, in directory: String) async throws -> [String] {
    let listing = directory + "/frames.md5"
    let status = try await onOwnThread { () throws -> Int32 in
      let process = Process()
      process.executableURL = URL(fileURLWithPath: "/usr/bin/ffmpeg")
      process.arguments = ["-nostdin", "-loglevel", "error", "-y", "-i", path, "-f", "framemd5", listing]
      process.standardInput = FileHandle.nullDevice
      try process.runClosingChildEnds()
      process.blockUntilExit()
      process.closeStandardPipes()
      return process.terminationStatus
    }
    try #require(status == 0, "ffmpeg -f framemd5 exited \(status)")
    return try String(contentsOfFile: listing, encoding: .utf8).split(separator: "\n")
      .filter { !$0.hasPrefix("#") }
      .compactMap { $0.split(separator: ",").last.map { $0.trimmingCharacters(in: .whitespaces) } }
  }

  @Test("frames are scaled down so that all of them fit the animation's pixel budget")
  func pixelBudget() async throws {
    let scratch = try ScratchDirectory("sequence-gif-budget")
    defer { scratch.remove() }
    var poster = Self.unhurried()
    poster.maximumAnimationPixels = 5 * 32 * 24  // half the side of 5 frames of 64×48
    let output = scratch.path + "/animated.gif"
    let (result, _) = await PosterRescuerTests.rescue(
      Samples.path("avif-sequence.avif"), into: output,
      rescuers: StandardRescuers.make(poster: poster), seconds: 120)
    let validation = try result.get()
    #expect(validation.type == .gif && validation.width == 32 && validation.height == 24)
    #expect(validation.frames == 5)
    #expect(
      SequenceAnimation.size(
        width: 1280, height: 720, frames: 90, maximumPixels: 8_000_000, maximumEdge: 1280) == (396, 222))
    #expect(
      SequenceAnimation.size(
        width: 64, height: 48, frames: 5, maximumPixels: 8_000_000, maximumEdge: 1280) == (64, 48))
  }

  @Test("a sequence over the frame limit gets a JPEG still of its first frame instead")
  func overTheFrameLimit() async throws {
    let scratch = try ScratchDirectory("sequence-still")
    defer { scratch.remove() }
    var poster = Self.unhurried()
    poster.maximumAnimationFrames = 4
    let output = scratch.path + "/still.jpg"
    let (result, _) = await PosterRescuerTests.rescue(
      Samples.path("avif-sequence.avif"), into: output,
      rescuers: StandardRescuers.make(poster: poster), seconds: 120)
    let validation = try result.get()
    #expect(validation.type == .jpeg && validation.width == 64 && validation.height == 48)
    let rescued = try #require(validation.rescued)
    #expect(rescued.rescuer == "poster" && rescued.actions == [.poster] && rescued.originalCodecs == ["av1"])
    // The image rescue was tried first and could not read it; the media rescue is not a candidate.
    #expect(
      !MediaRescuer().canRescue(
        try #require(MediaRescuerTests.refusal(of: Samples.path("avif-sequence.avif")))))
  }

  @Test("a BMP, which libvips reads only through ImageMagick, is converted to JPEG by FFmpeg's decoder")
  func bitmap() async throws {
    let scratch = try ScratchDirectory("bmp-still")
    defer { scratch.remove() }
    let output = scratch.path + "/still.jpg"
    let (result, _) = await PosterRescuerTests.rescue(
      Samples.path("bmp-24bit.bmp"), into: output, rescuers: StandardRescuers.make(poster: Self.unhurried()),
      seconds: 120)
    let validation = try result.get()
    #expect(validation.type == .jpeg && validation.width == 64 && validation.height == 48)
    let rescued = try #require(validation.rescued)
    #expect(rescued.rescuer == "poster" && rescued.actions == [.converted] && rescued.from == "image/bmp")
    #expect(rescued.originalCodecs == ["bmp"])
    // Without the poster rescuer it keeps its refusal.
    let (refused, _) = await PosterRescuerTests.rescue(
      Samples.path("bmp-24bit.bmp"), into: output, rescuers: StandardRescuers.make(poster: nil), seconds: 120)
    guard case .failure(let error) = refused else {
      Issue.record("a BMP was delivered without the poster rescuer")
      return
    }
    #expect(error.code == .unsupportedType)
  }

  /// A 1-bit BMP of `width` × `height`, all black: BITMAPFILEHEADER, BITMAPINFOHEADER (its
  /// height negated when `topDown`), a two-colour palette and the rows.
  static func bitmap(width: Int, height: Int, topDown: Bool = false) -> [UInt8] {
    func le32(_ value: Int) -> [UInt8] { (0..<4).map { UInt8(truncatingIfNeeded: value >> (8 * $0)) } }
    func le16(_ value: Int) -> [UInt8] { (0..<2).map { UInt8(truncatingIfNeeded: value >> (8 * $0)) } }
    let row = ((width + 31) / 32) * 4
    let offset = 14 + 40 + 8
    var bytes: [UInt8] = [0x42, 0x4D] + le32(offset + row * height) + le32(0) + le32(offset)
    bytes += le32(40) + le32(width) + le32(topDown ? -height : height) + le16(1) + le16(1) + le32(0)
    bytes += le32(row * height) + le32(2835) + le32(2835) + le32(2) + le32(0)
    bytes += [0, 0, 0, 0, 255, 255, 255, 0]
    bytes += [UInt8](repeating: 0, count: row * height)
    return bytes
  }

  @Test("a bitmap over the frame budget is refused from its header, before FFmpeg opens it")
  func bitmapOverBudget() async throws {
    let scratch = try ScratchDirectory("bmp-budget")
    defer { scratch.remove() }
    let source = scratch.path + "/big.bmp"
    try writeTestFile(Data(Self.bitmap(width: 5000, height: 4000)), to: source)  // 20 MP in 2.5 MB
    let output = scratch.path + "/still.jpg"
    let (result, _) = await PosterRescuerTests.rescue(
      source, into: output, rescuers: StandardRescuers.make(poster: Self.unhurried()), seconds: 120)
    guard case .failure(let error) = result else {
      Issue.record("a 20 MP bitmap was delivered: \(result)")
      return
    }
    #expect(error.code == .tooManyPixels, "\(error)")
    #expect(error.message.contains("5000×4000"), "\(error)")
    #expect(!FileManager.default.fileExists(atPath: output))
    // The header's size, either row order; a file that is not a bitmap has none.
    let small = scratch.path + "/small.bmp"
    try writeTestFile(Data(Self.bitmap(width: 33, height: 7, topDown: true)), to: small)
    #expect(BitmapHeader.size(of: small).map { [$0.width, $0.height] } == [33, 7])
    #expect(BitmapHeader.size(of: Samples.path("bmp-24bit.bmp")).map { [$0.width, $0.height] } == [64, 48])
    #expect(BitmapHeader.size(of: Samples.path("jpeg-baseline.jpg")) == nil)
    // and FFmpeg decodes the small top-down one: a black 33×7 still.
    let (still, _) = await PosterRescuerTests.rescue(
      small, into: output, rescuers: StandardRescuers.make(poster: Self.unhurried()), seconds: 120)
    let validation = try still.get()
    #expect(validation.type == .jpeg && validation.width == 33 && validation.height == 7)
  }

  @Test("an animation not done by its end declines, and leaves the still to its caller")
  func declinesAtItsEnd() async throws {
    let scratch = try ScratchDirectory("sequence-end")
    defer { scratch.remove() }
    let av = try #require(Libav.shared)
    let source = Samples.path("heif-sequence.heifs")
    let path = scratch.path + "/animated.gif"
    let answers = try await onOwnThread { () throws -> [Int?] in
      var answers: [Int?] = []
      for end in [ContinuousClock.now, ContinuousClock.now + .seconds(60)] {
        let input = try MediaInput(
          path: source, av: av, interrupt: MediaInterrupt(deadline: nil), maximumTracks: 8,
          maximumFramePixels: 1 << 24)
        let index = Int(av.av_find_best_stream(input.context, AVMEDIA_TYPE_VIDEO, -1, -1, nil, 0))
        let stream = try #require(input.stream(index))
        answers.append(
          try SequenceAnimation(configuration: PosterConfiguration()).make(
            from: input, stream: stream, index: index, av: av, interrupt: MediaInterrupt(deadline: nil),
            until: end, to: path))
      }
      return answers
    }
    #expect(answers == [nil, 5], "an end already past declines; a minute is enough for 5 frames")
  }
}
