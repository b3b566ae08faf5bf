/// The length-prefixed NAL units of an H.264 or HEVC track's samples, located through its
/// sample table (stsc runs, stco / co64 chunk offsets, stsz sizes) and walked as FFmpeg splits
/// a packet: a NAL unit whose length runs past the end of its sample ("Invalid NAL unit size
/// (8 > 4)") is refused. Such a sample is what a sample size off by a few bytes leaves: every
/// later sample of its chunk then starts inside another NAL unit, and no frame decodes.
///
/// Only the four-byte length prefixes are read, a NAL unit at a time, of the track's first
/// ``maximumSamples`` samples (at most ``maximumUnits`` units); a table that does not resolve (a
/// chunk past the end of the file, fewer sizes than samples) is left to the other checks.
///
/// Why the first samples only: a sample size off there leaves no frame to show (what "accepted"
/// promises against), while one later shows as a glitch in a video that plays; and each prefix
/// is a read of its own, scattered over the whole file, so walking every sample of a 45 MiB
/// movie cost about 90 ms a validation (the refusal of a movie over the duration limit went from
/// 2.6 ms to 96 ms, and a trim's check of its output grew as much).
struct ISONALUnits {
  /// The most samples walked in one track: ten seconds at 30 frames a second.
  static let maximumSamples = 300
  /// The most NAL units walked in one track.
  static let maximumUnits = 1_000_000

  /// The stsc box (runs of 12 bytes: first chunk, counting from 1; samples a chunk; entry).
  var sampleToChunk: ISOBox?
  /// The stco / co64 box.
  var chunkOffsets: ISOBox?
  /// The stsz box.
  var sampleSizes: ISOBox?

  /// The NAL length size of an `avcC` (byte 4) or `hvcC` (byte 21) configuration box; nil for
  /// other boxes or an impossible size (3).
  static func lengthSize(_ reader: ByteReader, configuration box: ISOBox, hevc: Bool) -> Int? {
    let at = hevc ? 21 : 4
    guard box.payloadSize > at, let byte = reader.u8(box.payload + at) else { return nil }
    let size = Int(byte & 0x03) + 1
    return size == 3 ? nil : size
  }

  /// The problem with the first sample whose NAL units, each after a `lengthSize`-byte
  /// prefix (from avcC or hvcC), overrun it; else nil.
  func problem(_ reader: ByteReader, lengthSize: Int) -> String? {
    guard let offsets = chunkOffsets, let sizes = sampleSizes, let table = sampleToChunk,
      let chunks = reader.u32be(offsets.payload + 4), let common = reader.u32be(sizes.payload + 4),
      let count = reader.u32be(sizes.payload + 8), let runCount = reader.u32be(table.payload + 4),
      runCount > 0
    else { return nil }
    /// The samples a chunk of stsc run `index`, and the first chunk of the next run.
    func run(_ index: Int) -> (samples: Int, next: Int)? {
      guard let samples = reader.u32be(table.payload + 8 + 12 * index + 4) else { return nil }
      let next =
        index + 1 < Int(runCount) ? reader.u32be(table.payload + 8 + 12 * (index + 1)).map(Int.init) : nil
      return (Int(samples), next ?? Int.max)
    }
    let wide = offsets.typeName == "co64"
    var sample = 0
    var units = 0
    var runIndex = 0
    guard var current = run(0) else { return nil }
    for chunk in 0..<Int(chunks) {
      while chunk + 1 >= current.next, runIndex + 1 < Int(runCount) {
        runIndex += 1
        guard let following = run(runIndex) else { return nil }
        current = following
      }
      let at = offsets.payload + 8 + chunk * (wide ? 8 : 4)
      guard let start = wide ? reader.u64be(at).flatMap(ProbeMath.int) : reader.u32be(at).map(Int.init) else {
        return nil
      }
      var position = start
      for _ in 0..<current.samples {
        guard sample < Int(count), sample < Self.maximumSamples else { return nil }
        let size = common != 0 ? Int(common) : reader.u32be(sizes.payload + 12 + 4 * sample).map(Int.init)
        guard let size, reader.contains(position, size) else { return nil }
        switch walk(reader, from: position, size: size, lengthSize: lengthSize, units: &units) {
        case .fits: break
        case .overrun(let length, let left):
          return
            "sample \(sample + 1) has a NAL unit of \(length) bytes where \(left) remain (Invalid NAL unit size)"
        case .stop: return nil
        }
        position += size
        sample += 1
      }
    }
    return nil
  }

  /// How one sample's NAL units lie.
  private enum Walk {
    /// Each unit ends inside the sample.
    case fits
    /// A unit of this length starts where this many bytes remain.
    case overrun(Int, Int)
    /// The unit budget is spent, or a read failed: no verdict.
    case stop
  }

  /// Walks the NAL units of the `size`-byte sample at `start`; bytes too few for a length
  /// prefix at its end are ignored, as FFmpeg does.
  private func walk(_ reader: ByteReader, from start: Int, size: Int, lengthSize: Int, units: inout Int)
    -> Walk
  {
    var position = start
    let end = start + size
    while end - position > lengthSize {
      units += 1
      guard units <= Self.maximumUnits,
        let length = lengthSize == 4
          ? reader.u32be(position).map(Int.init)
          : (lengthSize == 2 ? reader.u16be(position).map(Int.init) : reader.u8(position).map(Int.init))
      else { return .stop }
      position += lengthSize
      guard length <= end - position else { return .overrun(length, end - position) }
      position += length
    }
    return .fits
  }
}
