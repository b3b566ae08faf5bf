import Foundation
import TestSupport
import TestTraits
import Testing

@testable import AttachmentKit

/// Issue 13, item 2: every probe's work is bounded by the file's size, an array is read once,
/// and long walks stop at the deadline or on cancellation.
/// On the worker thread for CPU-bound tests (`.cpuBound`): the bombs keep a processor busy for up to a second each.
@Suite("Work budgets, deadlines and cancellation in the probes", .cpuBound)
struct WorkBudgetTests {
  /// Writes the issue's TIFF: one table of 4.85 million SHORTs (all 1: strip offset 1, one
  /// byte) and 4,096 IFDs whose StripOffsets and StripByteCounts both point at it; with
  /// `long`, 2.4 million LONGs instead (SHORT tables in a file over 128 KiB cannot point past
  /// its end, so they are not read; LONG ones are); with `shift`, IFD k points at the table +
  /// 2k instead (overlapping, never the same twice). About 10 MB.
  static func writeBomb(to path: String, long: Bool = false, shift: Bool) throws {
    let entries = long ? 2_400_000 : 4_850_000  // under the 10 MB image limit
    let unit = long ? 4 : 2
    let tableAt = 8
    let firstIFD = tableAt + unit * entries + 2 * 4_096  // room for the shifted tables' tails
    var bytes = [UInt8]()
    bytes.reserveCapacity(firstIFD + 4_096 * 66)
    bytes += [0x49, 0x49, 0x2A, 0x00] + ProbeFixtures.le32(firstIFD)
    let one: [UInt8] = long ? [0x01, 0x00, 0x00, 0x00] : [0x01, 0x00]
    for _ in 0..<entries { bytes += one }
    bytes += [UInt8](repeating: 0x01, count: firstIFD - bytes.count)
    for index in 0..<4_096 {
      let here = firstIFD + index * 66
      let table = tableAt + (shift ? 2 * index : 0)
      func entry(_ tag: Int, _ type: Int, _ count: Int, _ value: Int) -> [UInt8] {
        ProbeFixtures.le16(tag) + ProbeFixtures.le16(type) + ProbeFixtures.le32(count)
          + ProbeFixtures.le32(value)
      }
      bytes += ProbeFixtures.le16(5)
      bytes += entry(256, 3, 1, 64) + entry(257, 3, 1, 48) + entry(262, 3, 1, 1)
      bytes += entry(273, long ? 4 : 3, entries, table) + entry(279, long ? 4 : 3, entries, table)
      bytes += ProbeFixtures.le32(index == 4_095 ? 0 : here + 66)
    }
    try writeTestFile(Data(bytes), to: path)
  }

  @Test(
    "the 10 MB TIFF bomb (4,096 IFDs sharing one table of SHORTs or LONGs) is accepted within its work budget",
    arguments: [false, true])
  func tiffBombSharedTable(long: Bool) throws {
    let scratch = try ScratchDirectory("tiff-bomb")
    defer { scratch.remove() }
    let path = scratch.path + "/bomb.tiff"
    try Self.writeBomb(to: path, long: long, shift: false)
    let start = ContinuousClock.now
    // The shared table is read once: the file is accepted (every strip lies inside it). Read
    // once per IFD, its 4,096 × 4.9 million values would pass the reader's work budget (16
    // units a byte) long before the end, and the file would be refused. Work is what this
    // pins, not time: no deadline, whose margin would only measure the machine's load.
    let validation = try Validator().validate(file: path, sha256: String(repeating: "0", count: 64))
    #expect(validation.type == .tiff && validation.frames == 4_096)
    print("TIFF bomb (shared table) answered in \(ContinuousClock.now - start)")
  }

  @Test("the TIFF bomb with shifted, overlapping tables is refused: tables may not add up past the file")
  func tiffBombShiftedTables() throws {
    let scratch = try ScratchDirectory("tiff-bomb")
    defer { scratch.remove() }
    let path = scratch.path + "/bomb.tiff"
    try Self.writeBomb(to: path, shift: true)
    let start = ContinuousClock.now
    // Refused by the rule, not by the work budget or a deadline (either would say otherwise).
    do {
      let validation = try Validator().validate(file: path, sha256: String(repeating: "0", count: 64))
      Issue.record("accepted: \(validation)")
    } catch {
      #expect(error.code == .unsupportedType, "\(error)")
      #expect(error.message.contains("strip/tile tables add up"), "\(error)")
    }
    print("TIFF bomb (shifted tables) answered in \(ContinuousClock.now - start)")
  }

  /// A real MP3 repeated to about 2 MB (a long frame walk).
  static func longMP3() throws -> FileBytes {
    let sample = try Samples.bytes("mp3-no-tag.mp3")
    var bytes = [UInt8]()
    while bytes.count < 2_000_000 { bytes += sample }
    return FileBytes(bytes: bytes)
  }

  @Test("a walk whose deadline has passed stops with .interrupted(.deadline), whatever the bytes say")
  func deadlineStopsWalk() throws {
    let file = try Self.longMP3()
    #expect(throws: Never.self) { try MediaProbe.inspect(file: file, as: .mp3).get() }
    let result = MediaProbe.inspect(file: file, as: .mp3, signal: StopSignal(deadline: .now - .seconds(1)))
    #expect(result == .failure(.interrupted(.deadline)))
  }

  @Test("a walk in a cancelled task stops with .interrupted(.cancelled)")
  func cancellationStopsWalk() async throws {
    let file = try Self.longMP3()
    let task = Task { () -> Result<ProbeReport, ProbeProblem> in
      while !Task.isCancelled { await Task.yield() }
      return MediaProbe.inspect(file: file, as: .mp3)
    }
    task.cancel()
    #expect(await task.value == .failure(.interrupted(.cancelled)))
  }

  @Test("the validator answers deadline_exceeded after its deadline and cancelled when cancelled")
  func validatorDeadlineAndCancel() async throws {
    let path = Samples.path("mp3-no-tag.mp3")
    do {
      _ = try Validator().validate(file: path, deadline: .now - .milliseconds(1))
      Issue.record("accepted after the deadline")
    } catch {
      #expect(error.code == .deadlineExceeded)
    }
    let task = Task { () -> AttachmentError.Code? in
      while !Task.isCancelled { await Task.yield() }
      do {
        _ = try Validator().validate(file: path)
        return nil
      } catch let error as AttachmentError {
        return error.code
      } catch {
        return nil
      }
    }
    task.cancel()
    #expect(await task.value == .cancelled)
    // Without a deadline or cancellation the same file passes.
    #expect(try Validator().validate(file: path, deadline: .now + .seconds(5)).type == .mp3)
  }

  @Test("a reader stops with .workBudget once its reads pass 16 per byte plus 4 million")
  func readBudget() {
    let reader = ByteReader(bytes: [1, 2, 3, 4])
    let allowed = ByteReader.readsPerByte * 4 + ByteReader.baseReads
    for _ in 0..<allowed { _ = reader.u8(0) }
    #expect(reader.stop == nil && reader.u8(0) == nil && reader.stop == .workBudget)
    #expect(reader.u8(1) == nil)
  }
}
