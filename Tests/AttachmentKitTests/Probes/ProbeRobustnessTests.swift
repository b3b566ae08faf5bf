import TestTraits
import Testing

@testable import AttachmentKit

/// Hostile input: every prefix of every sample, bit flips, random bytes and hand-made traps.
/// Nothing may crash or hang, identify never names a format the bytes are not, and every walk
/// reaches a verdict within its work budget. Each walk runs under a deadline of its own, counted
/// from the walk's start on the worker thread, so a hang fails the test (as an interrupted walk)
/// instead of stalling CI. There is no time limit on the suite: Swift Testing counts one from
/// the test's start, which includes the minutes a test queues behind other CPU-bound tests for
/// the one worker, and the cancellation it sends then interrupts every walk still to come.
/// On the worker thread for CPU-bound tests (`.cpuBound`): each test probes thousands of generated files.
@Suite(.cpuBound)
struct ProbeRobustnessTests {
  /// How long one walk of these small inputs may take before it counts as a hang: 10 s, where a
  /// walk takes microseconds alone and a thread of a loaded machine may wait seconds to run.
  private static let walkLimit: Duration = .seconds(10)
  /// A small deterministic generator (SplitMix64), so failures reproduce.
  struct SplitMix: RandomNumberGenerator {
    var state: UInt64
    /// The next 64 random bits.
    mutating func next() -> UInt64 {
      state &+= 0x9E37_79B9_7F4A_7C15
      var z = state
      z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
      z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
      return z ^ (z >> 31)
    }
  }

  /// Formats whose every proper prefix must fail inspect (their structure has lengths or an
  /// end marker that a cut always breaks).
  private static let cutAlwaysDetected: Set<ProbedFormat> = [.jpeg, .png, .gif, .tiff, .isoBMFF, .wav, .caf]

  /// Whether `bytes` end with an mdat that follows a moof: a fragmented movie cut between
  /// fragments, which is structurally complete.
  private static func endsBetweenFragments(_ bytes: [UInt8]) -> Bool {
    let reader = ByteReader(bytes: bytes)
    var position = 0
    var previous: UInt32 = 0
    var last: UInt32 = 0
    while position < bytes.count, case .box(let box) = ISOBox.header(reader, at: position, limit: bytes.count)
    {
      previous = last
      last = box.type
      position = box.end
    }
    return position == bytes.count && last == ProbeMath.code("mdat") && previous == ProbeMath.code("moof")
  }

  /// Inspects `bytes` as `format` under the walk limit, recording an issue when the walk was
  /// interrupted: by the deadline (a hang) or by the work budget, which inputs this small never
  /// justify exceeding.
  @discardableResult
  private static func inspect(
    _ bytes: [UInt8], as format: ProbedFormat, _ what: @autoclosure () -> String
  ) -> Result<ProbeReport, ProbeProblem> {
    let result = MediaProbe.inspect(
      file: FileBytes(bytes: bytes), as: format, signal: StopSignal(deadline: .now + walkLimit))
    if case .failure(.interrupted(let stop)) = result {
      Issue.record("\(what()) as \(format): interrupted (\(stop)) instead of a verdict")
    }
    return result
  }

  /// Runs inspect as every format: each returns a verdict in time, whatever it says.
  private func inspectAsEverything(_ bytes: [UInt8], _ what: @autoclosure () -> String) {
    for format in ProbedFormat.allCases { Self.inspect(bytes, as: format, what()) }
  }

  /// Every sample is accepted whole.
  @Test func everySampleIsAcceptedWhole() throws {
    for sample in ProbeFixtures.all {
      #expect(MediaProbe.identify(bytes: sample.bytes)?.format == sample.format, "\(sample.name)")
      let result = MediaProbe.inspect(file: FileBytes(bytes: sample.bytes), as: sample.format)
      #expect((try? result.get()) != nil, "\(sample.name): \(result)")
    }
  }

  /// Every prefix of every sample identifies as its format or nothing, and fails inspect
  /// wherever a cut is detectable.
  @Test func everyPrefixOfEverySample() {
    for sample in ProbeFixtures.all {
      for length in 0..<sample.bytes.count {
        let cut = Array(sample.bytes.prefix(length))
        if let format = MediaProbe.identify(bytes: cut)?.format {
          #expect(format == sample.format, "\(sample.name) cut to \(length) identified as \(format)")
        }
        let result = Self.inspect(cut, as: sample.format, "\(sample.name) cut to \(length)")
        if Self.cutAlwaysDetected.contains(sample.format), case .success(let report) = result,
          !(report.isFragmented && Self.endsBetweenFragments(cut))
        {
          Issue.record("\(sample.name) cut to \(length) passed inspect")
        }
        if length % 7 == 0 { inspectAsEverything(cut, "\(sample.name) cut to \(length)") }
      }
    }
  }

  /// Cut samples are reported truncated.
  @Test func cutSamplesAreReportedTruncated() {
    for sample in ProbeFixtures.all where Self.cutAlwaysDetected.contains(sample.format) {
      // Past the magic and header, a cut is a truncation, not a malformation.
      for length in stride(from: 60, to: sample.bytes.count, by: 3) {
        let result = MediaProbe.inspect(
          file: FileBytes(bytes: Array(sample.bytes.prefix(length))), as: sample.format)
        guard case .failure(.truncated) = result else {
          Issue.record("\(sample.name) cut to \(length): \(result)")
          continue
        }
      }
    }
  }

  /// Bit flips never change the format.
  @Test func bitFlipsNeverChangeTheFormat() {
    var random = SplitMix(state: 0xB17_F11B)
    for sample in ProbeFixtures.all {
      for index in 0..<min(sample.bytes.count, 600) {
        for mask: UInt8 in [1 << UInt8(index % 8), UInt8.random(in: 1...255, using: &random)] {
          var copy = sample.bytes
          copy[index] ^= mask
          if let format = MediaProbe.identify(bytes: copy)?.format {
            #expect(format == sample.format, "\(sample.name) byte \(index) ^ \(mask) identified as \(format)")
          }
          Self.inspect(copy, as: sample.format, "\(sample.name) byte \(index) ^ \(mask)")
        }
      }
    }
  }

  /// Random bytes identify as nothing and pass inspect as no format.
  @Test func randomBytesAreNothing() {
    var random = SplitMix(state: 20_240_229)
    for round in 0..<600 {
      let count = Int.random(in: 0...3_000, using: &random)
      let bytes = (0..<count).map { _ in UInt8.random(in: 0...255, using: &random) }
      #expect(MediaProbe.identify(bytes: bytes) == nil, "random round \(round)")
      for format in ProbedFormat.allCases {
        if case .success = Self.inspect(bytes, as: format, "random round \(round)") {
          Issue.record("random round \(round) passed inspect as \(format)")
        }
      }
    }
  }

  /// Random bytes behind each magic never crash.
  @Test func randomBytesBehindEachMagicNeverCrash() {
    var random = SplitMix(state: 77)
    let magics: [(ProbedFormat, [UInt8])] = [
      (.jpeg, [0xFF, 0xD8, 0xFF]), (.png, PNGProbe.signature), (.gif, Array("GIF89a".utf8)),
      (.tiff, [0x49, 0x49, 0x2A, 0]), (.tiff, [0x4D, 0x4D, 0, 0x2A]),
      (.isoBMFF, [0, 0, 0, 0x18] + Array("ftyp".utf8)),
      (.isoBMFF, [0, 0, 0, 8] + Array("wide".utf8)), (.mpegProgramStream, [0, 0, 1, 0xBA, 0x44]),
      (.mpegVideoStream, [0, 0, 1, 0xB3]), (.mp3, [0xFF, 0xFB]), (.mp3, ProbeFixtures.id3(body: 4)),
      (.adts, [0xFF, 0xF1]), (.wav, Array("RIFF".utf8) + [0, 1, 0, 0] + Array("WAVEfmt ".utf8)),
      (.caf, Array("caff".utf8) + [0, 1, 0, 0] + Array("desc".utf8) + ProbeFixtures.be64(32)),
    ]
    for (format, magic) in magics {
      for _ in 0..<150 {
        let count = Int.random(in: 0...1_500, using: &random)
        let bytes = magic + (0..<count).map { _ in UInt8.random(in: 0...255, using: &random) }
        if let found = MediaProbe.identify(bytes: bytes)?.format {
          #expect(found == format, "\(format) magic + noise identified as \(found)")
        }
        inspectAsEverything(bytes, "\(format) magic + \(count) noise bytes")
      }
    }
  }

  /// Hand-made traps (extreme sizes and counts) finish without trapping.
  @Test func handMadeTrapsFinish() {
    let traps: [[UInt8]] = [
      // ISO BMFF: largesize of 2^64-1, nested size 0, a box of size 1 with no room for largesize.
      ProbeFixtures.ftyp("isom", ["isom"]) + [0, 0, 0, 1] + ProbeFixtures.ascii("mdat")
        + ProbeFixtures.fill(8, 0xFF),
      ProbeFixtures.ftyp("isom", ["isom"])
        + ProbeFixtures.box("moov", [0, 0, 0, 0] + ProbeFixtures.ascii("trak")),
      ProbeFixtures.ftyp("isom", ["isom"]) + [0, 0, 0, 1] + ProbeFixtures.ascii("moov"),
      ProbeFixtures.ftyp("isom", ["isom"])
        + ProbeFixtures.box("moov", ProbeFixtures.fullBox("mvhd", version: 1, [])),
      // TIFF: entry counts and value counts at their maxima.
      [0x49, 0x49, 0x2A, 0, 8, 0, 0, 0, 0xFF, 0xFF] + ProbeFixtures.fill(40, 0xFF),
      [0x49, 0x49, 0x2A, 0, 8, 0, 0, 0, 2, 0] + ProbeFixtures.le16(273) + ProbeFixtures.le16(4)
        + ProbeFixtures.le32(0x7FFF_FFFF) + ProbeFixtures.le32(8) + ProbeFixtures.le16(279)
        + ProbeFixtures.le16(4)
        + ProbeFixtures.le32(0x7FFF_FFFF) + ProbeFixtures.le32(8) + ProbeFixtures.fill(4),
      // GIF: a full global table claimed, then nothing.
      ProbeFixtures.ascii("GIF89a") + [1, 0, 1, 0, 0xFF, 0, 0],
      // JPEG: a segment length of 0xFFFF, and endless fill bytes.
      [0xFF, 0xD8, 0xFF, 0xE1, 0xFF, 0xFF] + ProbeFixtures.fill(100),
      [0xFF, 0xD8] + ProbeFixtures.fill(5_000, 0xFF),
      // PNG: a chunk length of 2^31-1.
      PNGProbe.signature
        + ProbeFixtures.pngChunk("IHDR", ProbeFixtures.be32(1) + ProbeFixtures.be32(1) + [8, 0, 0, 0, 0])
        + ProbeFixtures.be32(0x7FFF_FFFF) + ProbeFixtures.ascii("IDAT"),
      // CAF: a chunk size of Int64.min and of Int64.max.
      Array(ProbeFixtures.caf(frames: 1).prefix(52)) + ProbeFixtures.ascii("data") + [0x80]
        + ProbeFixtures.fill(7),
      Array(ProbeFixtures.caf(frames: 1).prefix(52)) + ProbeFixtures.ascii("free") + [0x7F]
        + ProbeFixtures.fill(7, 0xFF),
      // WAV: data size 2^32-1 with a normal RIFF size, and MP3 frames of all ones.
      ProbeFixtures.wav(samples: 4, declared: 0xFFFF_FFFE),
      ProbeFixtures.fill(4_000, 0xFF),
      // MPEG: start codes everywhere.
      (0..<1_000).flatMap { _ in [0, 0, 1, 0xBA] },
      ProbeFixtures.sequenceHeader() + (0..<2_000).flatMap { _ in [0, 0, 1, 0x00] },
    ]
    for (index, trap) in traps.enumerated() {
      _ = MediaProbe.identify(bytes: trap)
      inspectAsEverything(trap, "trap \(index)")
      _ = trap.withUnsafeBytes { MediaProbe.id3v2Length($0) }
      // None of them is a valid file of any format, except that the elementary-stream probe
      // checks framing, not picture contents: a sequence header and empty pictures (the last
      // trap) is well framed MPEG video. (Known limit: a decoder would show nothing.)
      for format in ProbedFormat.allCases where !(index == traps.count - 1 && format == .mpegVideoStream) {
        if case .success = Self.inspect(trap, as: format, "trap \(index)") {
          Issue.record("trap \(index) passed inspect as \(format)")
        }
      }
    }
  }

  /// Long hostile inputs finish and report what they are.
  @Test func longHostileInputsFinish() {
    // Entropy data made only of stuffed FF00 pairs, and an elementary stream of empty pictures.
    let jpeg =
      ProbeFixtures.jpeg(endOfImage: false)
      + (0..<300_000).flatMap { _ in [0xFF, 0x00] as [UInt8] }
    guard case .failure(.truncated) = Self.inspect(jpeg, as: .jpeg, "stuffed JPEG") else {
      Issue.record("expected truncated")
      return
    }
    let frames = ProbeFixtures.fill(600_000, 0xFF)
    #expect((try? Self.inspect(frames, as: .mp3, "all-ones MP3").get()) == nil)
    #expect((try? Self.inspect(frames, as: .adts, "all-ones ADTS").get()) == nil)
  }

  /// Prefixes of the real samples in Samples/media (the accepted ones, each the format its
  /// whole file identifies as): every length up to 512 bytes, then 64 lengths spread over the
  /// rest. A prefix identifies as its format or nothing, gets a verdict in time, and fails
  /// inspect wherever its format makes a cut detectable.
  @Test func prefixesOfTheBundledSamples() throws {
    #expect(Samples.accepted.count >= 36)
    for entry in Samples.accepted {
      let bytes = try Samples.bytes(entry.file)
      let format = try #require(
        MediaProbe.identify(bytes: bytes)?.format, "\(entry.file) is not identified whole")
      let step = max(1, (bytes.count - 512) / 64)
      let lengths = Array(0..<min(512, bytes.count)) + Array(stride(from: 512, to: bytes.count, by: step))
      for length in lengths {
        let cut = Array(bytes.prefix(length))
        if let found = MediaProbe.identify(bytes: cut)?.format {
          #expect(found == format, "\(entry.file) cut to \(length) identified as \(found)")
        }
        let result = Self.inspect(cut, as: format, "\(entry.file) cut to \(length)")
        if Self.cutAlwaysDetected.contains(format), case .success(let report) = result,
          !(report.isFragmented && Self.endsBetweenFragments(cut))
        {
          Issue.record("\(entry.file) cut to \(length) passed inspect")
        }
      }
    }
  }
}
