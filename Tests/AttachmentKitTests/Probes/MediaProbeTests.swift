import TestTraits
import Testing

@testable import AttachmentKit

/// The entry points: `identify(prefix:)`, `identify(file:)`, `probe(file:)`, and a few
/// tolerated deviations that real files have.
@Suite(.cpuBound)
struct MediaProbeTests {
  /// `identify(prefix:)` over a raw buffer agrees with the array form for every sample.
  @Test func prefixBufferAndArrayAgree() {
    for sample in ProbeFixtures.all {
      let viaBuffer = sample.bytes.withUnsafeBytes { MediaProbe.identify(prefix: $0) }
      #expect(viaBuffer == MediaProbe.identify(bytes: sample.bytes), "\(sample.name)")
      #expect(viaBuffer?.format == sample.format, "\(sample.name)")
    }
    #expect([UInt8]().withUnsafeBytes { MediaProbe.identify(prefix: $0) } == nil)
  }

  /// `probe(file:)` runs both steps, and says nil for what is no accepted format.
  @Test func probeRunsBothSteps() throws {
    let report = try #require(MediaProbe.probe(file: FileBytes(bytes: ProbeFixtures.gif(frames: 2))))
    #expect(try report.get().frames == 2)
    let page = ProbeFixtures.ascii("<!DOCTYPE html><html><body>Not found</body></html>")
    #expect(MediaProbe.probe(file: FileBytes(bytes: page)) == nil)
    #expect(MediaProbe.probe(file: FileBytes(bytes: [])) == nil)
  }

  /// Inspecting a file as the wrong format fails instead of inventing a report.
  @Test func inspectingAsTheWrongFormatFails() {
    for sample in ProbeFixtures.all {
      for format in ProbedFormat.allCases where format != sample.format {
        if case .success = MediaProbe.inspect(file: FileBytes(bytes: sample.bytes), as: format) {
          Issue.record("\(sample.name) passed inspect as \(format)")
        }
      }
    }
  }

  /// Stray zero bytes between GIF blocks are skipped and noted.
  @Test func gifStrayZerosAreSkipped() throws {
    var bytes = ProbeFixtures.gif(frames: 2)
    bytes.insert(contentsOf: [0, 0], at: bytes.count - 1)
    #expect(MediaProbe.identify(bytes: bytes)?.format == .gif)
    let report = try MediaProbe.inspect(file: FileBytes(bytes: bytes), as: .gif).get()
    #expect(report.frames == 2)
    #expect(report.notes.contains { $0.contains("2 stray zero bytes") })
  }
}
