import Foundation
import TestSupport
import Testing

@testable import AttachmentKit

/// The frame count of an animated WebP, read from its chunk headers before libvips reads it:
/// exact, a window of headers per read, and under the job's deadline.
@Suite("WebP frames")
struct WebPFramesTests {
  private static func counted(_ bytes: [UInt8], deadline: ContinuousClock.Instant? = nil) throws -> Int? {
    let scratch = try ScratchDirectory("webp-frames")
    defer { scratch.remove() }
    let path = scratch.path + "/f.webp"
    try Data(bytes).write(to: URL(fileURLWithPath: path))
    return try WebPFrames.count(in: FileBytes(path: path), deadline: deadline)
  }

  @Test("every ANMF chunk is counted, across window boundaries; a still is 0 frames; another format nil")
  func counts() throws {
    let still = try Samples.bytes("webp-lossy.webp")
    for frames in [1, 3, 2_001, 100_000] {
      let animation = try #require(
        ImageBombs.animatedWebP(still: still, width: 16, height: 16, frames: frames))
      #expect(try Self.counted(animation) == frames, "\(frames) frames")
    }
    #expect(try Self.counted(still) == 0)
    #expect(try Self.counted(try Samples.bytes("png-gray.png")) == nil)
  }

  @Test("a deadline that has passed stops the count with deadline_exceeded")
  func deadline() throws {
    let still = try Samples.bytes("webp-lossy.webp")
    let animation = try #require(ImageBombs.animatedWebP(still: still, width: 16, height: 16, frames: 10_000))
    #expect(throws: AttachmentError.self) { try Self.counted(animation, deadline: .now - .seconds(1)) }
    #expect(try Self.counted(animation, deadline: .now + .seconds(60)) == 10_000)
  }
}
