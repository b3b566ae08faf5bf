import Foundation
import TestSupport
import TestTraits
import Testing

@testable import AttachmentKit

/// Issue 52, item 5: a 1,987-byte JPEG 2000 whose SIZ marker was mutated (2,097,216 × 48 pixels
/// in 32,769 tiles of 3 components) drove its rescue worker to 718 MB before the 1 GiB ceiling
/// stopped it. Its header is now read before OpenJPEG reads it, and refused at once.
@Suite("Rescue: JPEG 2000 bounded before the decoder", .rescueTurn, .threadOfItsOwn)
struct JPEG2000BoundsTests {
  /// The peak resident size of process `pid` (`VmHWM`), in KiB, or `nil`.
  static func peakKiB(_ pid: Int32) -> Int? {
    guard let text = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
      let line = text.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") })
    else { return nil }
    return line.split(separator: " ").compactMap { Int($0) }.first
  }

  @Test("the SIZ marker, a JP2's ihdr box and the COD marker's levels are read")
  func headers() throws {
    for file in ["jpeg2000-codestream.j2k", "jpeg2000.jp2"] {
      let header = try #require(JPEG2000Header(of: FileBytes(path: Samples.path(file))), "\(file)")
      #expect(header.width == 64 && header.height == 48 && header.components == 3, "\(file)")
      #expect(header.tiles == 1 && header.decompositionLevels == 5, "\(file): \(header)")
    }
    let mutated = try #require(JPEG2000Header(of: FileBytes(path: Samples.repro("jpeg2000-siz-mutated.j2k"))))
    #expect(mutated.width == 2_097_216 && mutated.height == 48 && mutated.tiles == 32_769)
    #expect(JPEG2000Header(of: try FileBytes(path: Samples.path("png-gray.png"))) == nil)
  }

  @Test("each bound of the header names its code: the area, the samples, the tiles")
  func eachBound() throws {
    let scratch = try ScratchDirectory("jpeg2000-header")
    defer { scratch.remove() }
    let valid = try Samples.bytes("jpeg2000-codestream.j2k")
    /// The valid codestream with its SIZ rewritten to `width` × `height` in `tile` × `tile` tiles.
    func declaring(_ width: UInt32, _ height: UInt32, tile: UInt32) throws -> String {
      var bytes = valid
      for (offset, value) in [(8, width), (12, height), (24, tile), (28, tile)] {
        for index in 0..<4 {
          bytes[offset + index] = UInt8(truncatingIfNeeded: value >> (24 - 8 * UInt32(index)))
        }
      }
      let path = scratch.path + "/\(width)x\(height)-\(tile).j2k"
      try writeTestFile(Data(bytes), to: path)
      return path
    }
    let bounds = ImageWorkBounds(configuration: RescueConfiguration())
    func code(_ path: String) -> AttachmentError.Code? {
      do throws(AttachmentError) {
        try bounds.checkJPEG2000(path: path, detected: nil)
        return nil
      } catch {
        return error.code
      }
    }
    #expect(code(try declaring(20_000, 20_000, tile: 20_000)) == .tooManyPixels)  // 400 MP
    #expect(code(try declaring(5000, 5000, tile: 5000)) == .tooManyPixels)  // 75 M samples
    #expect(code(try declaring(4000, 4000, tile: 16)) == .tooComplex)  // 62,500 tiles
    #expect(code(try declaring(4000, 4000, tile: 512)) == nil)  // 64 tiles, 48 M samples
    #expect(code(Samples.path("jpeg2000.jp2")) == nil)
  }

  @Test(
    "the mutated codestream is refused in milliseconds, its worker never past 256 MiB; the valid samples still rescue"
  )
  func mutatedRefusedEarly() async throws {
    let scratch = try ScratchDirectory("jpeg2000-bounds")
    defer { scratch.remove() }
    var configuration = RescueConfiguration()
    configuration.workers = RescueWorkerTests.uniqueWorkers()
    let rescuer = ImageRescuer(configuration: configuration)
    let source = Samples.repro("jpeg2000-siz-mutated.j2k")
    let refusal = try #require(MediaRescuerTests.refusal(of: source))
    #expect(refusal.format == "image/x-jp2-codestream")

    // When it is rescued, its worker's peak resident size sampled every millisecond meanwhile
    let watch = WorkerWatch()
    let start = ContinuousClock.now
    async let answer = onOwnThread {
      defer { watch.finish() }
      return Result { () throws(AttachmentError) -> Validation in
        try rescuer.rescue(
          file: source, refusedWith: refusal, to: scratch.path + "/out", deadline: .now + .seconds(20))
      }
    }
    var peak = 0
    var samples = 0
    while !watch.isFinished {
      for pid in RescueWorkerTests.workerPIDs(configuration.workers) {
        if let seen = Self.peakKiB(pid) {
          peak = max(peak, seen)
          samples += 1
        }
      }
      try await Task.sleep(for: .milliseconds(1))
    }
    let result = await answer
    let elapsed = ContinuousClock.now - start

    // Then it is refused for its declared size, at once, and its worker stayed small (it
    // reached 718 MB before: OpenJPEG's tiles and samples)
    guard case .failure(let error) = result else {
      Issue.record("rescued: \(result)")
      return
    }
    #expect([.tooManyPixels, .tooComplex].contains(error.code), "\(error)")
    #expect(error.message.contains("JPEG 2000"), "\(error)")
    #expect(elapsed < .seconds(2), "\(elapsed)")  // a worker's start and a header read
    #expect(peak < 256 * 1024, "the worker peaked at \(peak) KiB")

    for file in ["jpeg2000.jp2", "jpeg2000-codestream.j2k"] {
      let valid = Samples.path(file)
      let validation = try await onOwnThread { () throws -> Validation in
        try rescuer.rescue(
          file: valid, refusedWith: try #require(MediaRescuerTests.refusal(of: valid)),
          to: scratch.path + "/" + file + ".out", deadline: .now + .seconds(20))
      }
      #expect(validation.type == .jpeg && validation.width == 64 && validation.height == 48, "\(file)")
    }
  }
}

/// Whether a rescue a test watches has returned; set on the rescue's thread, read by the test.
final class WorkerWatch: @unchecked Sendable {
  private let lock = NSLock()
  private var finished = false

  /// Whether ``finish()`` was called.
  var isFinished: Bool { lock.withLock { finished } }

  /// Marks the rescue returned.
  func finish() { lock.withLock { finished = true } }
}
