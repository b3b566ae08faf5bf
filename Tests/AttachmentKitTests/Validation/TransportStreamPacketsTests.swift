import Testing

@testable import AttachmentKit

/// MPEG transport streams named by their packets (issue #42): libmagic names one only when its
/// first packet is a PAT.
@Suite("Validation: transport streams by their packets")
struct TransportStreamPacketsTests {
  /// `count` packets of `size` bytes, each `prefix` bytes (M2TS's time code) then a packet header
  /// with payload only (adaptation field control `01`) on PID `pid`, then `fill`.
  static func stream(count: Int, size: Int, prefix: Int = 0, pid: UInt16 = 0x100, fill: UInt8 = 0xFF)
    -> [UInt8]
  {
    var bytes: [UInt8] = []
    for index in 0..<count {
      var packet = [UInt8](repeating: fill, count: size)
      let start = prefix
      packet[start] = 0x47
      packet[start + 1] = UInt8(pid >> 8) & 0x1F
      packet[start + 2] = UInt8(pid & 0xFF)
      packet[start + 3] = 0x10 | UInt8(index & 0x0F)
      bytes += packet
    }
    return bytes
  }

  static func size(_ bytes: [UInt8]) -> Int? {
    bytes.withUnsafeBytes { TransportStreamPackets.packetSize(of: $0) }
  }

  @Test("188-, 192- (M2TS, its time code first) and 204-byte packets, from any first packet")
  func packetForms() {
    #expect(Self.size(Self.stream(count: 21, size: 188, pid: 0x11)) == 188)  // an SDT first
    #expect(Self.size(Self.stream(count: 21, size: 192, prefix: 4)) == 192)
    #expect(Self.size(Self.stream(count: 21, size: 204)) == 204)
    // A stream cut between packets: the sync is found within the first packet
    #expect(Self.size(Array(Self.stream(count: 21, size: 188).dropFirst(100))) == 188)
    // Three packets are enough, two are not
    #expect(Self.size(Self.stream(count: 3, size: 188)) == 188)
    #expect(Self.size(Self.stream(count: 2, size: 188)) == nil)
  }

  @Test("packets with an adaptation field only (control 10, a PCR-only packet) or both (11) count as packets")
  func adaptationFieldPackets() {
    // A PCR-only second packet: adaptation field control 10, the field filling the packet
    var pcrOnly = Self.stream(count: 21, size: 188)
    pcrOnly[188 + 3] = 0x20 | 0x01
    pcrOnly[188 + 4] = 183  // adaptation_field_length
    pcrOnly[188 + 5] = 0x10  // PCR_flag
    #expect(Self.size(pcrOnly) == 188)
    // Every packet with an adaptation field only, and one with both
    var adaptationOnly = Self.stream(count: 3, size: 188)
    for packet in 0..<3 { adaptationOnly[188 * packet + 3] = 0x20 }
    #expect(Self.size(adaptationOnly) == 188)
    var both = Self.stream(count: 21, size: 188)
    both[188 * 2 + 3] = 0x30
    #expect(Self.size(both) == 188)
  }

  @Test(
    "what is not a stream: one bad packet among good ones, the reserved adaptation field control, a run of G's, noise"
  )
  func notStreams() {
    var broken = Self.stream(count: 21, size: 188)
    broken[188 * 5] = 0x46
    #expect(Self.size(broken) == nil)
    var reserved = Self.stream(count: 21, size: 188)
    reserved[188 * 7 + 3] = 0x00
    #expect(Self.size(reserved) == nil)
    #expect(Self.size([UInt8](repeating: 0x47, count: 4096)) == nil)
    var generator = SystemRandomNumberGenerator()
    #expect(Self.size((0..<4096).map { _ in UInt8.random(in: 0...255, using: &generator) }) == nil)
  }

  @Test("the validator names a stream libmagic does not (ffmpeg's, SDT first) video/MP2T")
  func validatorNamesIt() throws {
    let error = #expect(throws: Refusal.self) {
      _ = try Validator().judge(file: Samples.path("mpegts-sdt-first.ts"))
    }
    #expect(error?.error.detected == "video/MP2T")
    #expect(error?.format == "video/MP2T")
  }
}
