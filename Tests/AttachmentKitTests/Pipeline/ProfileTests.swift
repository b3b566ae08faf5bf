import Foundation
import TestSupport
import TestTraits
import Testing

@testable import AttachmentKit

/// Profiles end to end: real files served on loopback, real libcurl, libvips in its rescue
/// workers, one cache shared by the profiles' callers.
@Suite("Pipeline: profiles", .rescueTurn, .threadOfItsOwn)
struct ProfileTests {
  /// A request for `url` of `profile`, with a generous timeout.
  static func request(_ url: String, _ profile: AttachmentProfile) throws -> AttachmentRequest {
    try AttachmentRequest(url: url, timeout: generousTimeout, profile: profile)
  }

  /// The file `vips thumbnail SOURCE OUT SIDE` makes (`OUT` with its saver's options), in `scratch`.
  static func thumbnail(_ source: String, side: Int, to name: String, in scratch: ScratchDirectory)
    async throws
    -> String
  {
    let output = scratch.path + "/" + name
    let status = await ImageBombs.vips(["thumbnail", source, output, "\(side)"])
    try #require(status == 0, "vips thumbnail failed with \(status)")
    return output
  }

  @Test("android: a 6000×4000 JPEG and a 3000×2000 WebP become JPEGs of at most 1 MB and 1024 pixels")
  func androidImages() async throws {
    let fixture = try PipelineFixture("profiles")
    defer { fixture.close() }
    let photo = try await LargeSamples.path("jpeg-24mp.jpg")
    let webp = try await Self.thumbnail(photo, side: 3000, to: "photo.webp", in: fixture.scratch)
    let sources = [(photo, "photo", 6000), (webp, "webp", 3000)]
    for (file, name, width) in sources {
      let url = fixture.serve(file, name: name)

      let attachment = try await fixture.pipeline.attachment(Self.request(url, .android))

      #expect(attachment.type == .jpeg, "\(name)")
      #expect(attachment.bytes <= 1_000_000, "\(name): \(attachment.bytes) bytes")
      let delivered = try #require(attachment.validation.width)
      #expect(max(delivered, attachment.validation.height ?? 0) <= 1024, "\(name)")
      #expect(delivered == 1024, "\(name): the long side is downscaled to the limit, not below it")
      #expect(attachment.validation.rescued?.originalWidth == width, "\(name)")
      // The file is what the result says, validated again from scratch under the same rules
      let again = try Validator(limits: AttachmentProfile.android.applied(to: PipelineConfiguration()).limits)
        .validate(file: attachment.path)
      #expect(again.sha256 == attachment.sha256)
    }
    let left = await fixture.leftBehind()
    #expect(left.isEmpty, "left behind: \(left)")
  }

  @Test(
    "android: a 578×578 noise PNG inside 1024 pixels but over 1,000,000 bytes comes out at most 1,000,000 bytes"
  )
  func androidByteLimitDecides() async throws {
    // Given an RGB PNG of deterministic noise, stored uncompressed: 1,002,973 bytes, over the
    // android limit (1,000,000) and under a mebibyte, so only that limit can make it a rescue
    let fixture = try PipelineFixture("profiles")
    defer { fixture.close() }
    let side = 578
    var state: UInt64 = 0x9E37_79B9_7F4A_7C15
    var rows: [UInt8] = []
    rows.reserveCapacity(side * (1 + 3 * side))
    for _ in 0..<side {
      rows.append(0)  // filter: none
      for _ in 0..<3 * side {
        state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
        rows.append(UInt8(truncatingIfNeeded: state >> 56))
      }
    }
    let png =
      PNGProbe.signature
      + ProbeFixtures.pngChunk("IHDR", ProbeFixtures.be32(side) + ProbeFixtures.be32(side) + [8, 2, 0, 0, 0])
      + ProbeFixtures.pngChunk("IDAT", ProbeFixtures.zlibStored(rows)) + ProbeFixtures.pngChunk("IEND", [])
    try #require(png.count > 1_000_000 && png.count < 1_048_576, "\(png.count) bytes")
    let file = fixture.scratch.path + "/noise.png"
    try writeTestFile(png, to: file)
    #expect(try Validator().validate(file: file).width == side)

    // When android asks for it
    let attachment = try await fixture.pipeline.attachment(
      Self.request(fixture.serve(file, name: "noise"), .android))

    // Then it was rescued to fit the limit (noise is a large JPEG too: the rescue may also
    // take a few pixels off), never grown
    #expect(attachment.bytes <= 1_000_000, "\(attachment.bytes) bytes")
    #expect(attachment.validation.rescued?.originalWidth == side)
    #expect((attachment.validation.width ?? .max) <= side)
  }

  @Test("android: a video or audio file is refused from its first bytes, naming the profile")
  func androidRefusesMedia() async throws {
    let fixture = try PipelineFixture("profiles")
    defer { fixture.close() }
    for sample in ["mp4-avc1.mp4", "mp3-no-tag.mp3"] {
      let url = fixture.serve(Samples.path(sample), name: sample)
      // The same file's first 4 KiB, declared 50 MB long, and then nothing: only a refusal
      // from the first bytes answers before the deadline.
      let head = Array(try Samples.bytes(sample).prefix(4096))
      fixture.server.route("/head/\(sample)") { _, writer in
        _ = writer.writeHead(status: 200, headers: [("Content-Length", "50000000")])
        _ = writer.write(head)
        writer.waitForClientToClose()
      }
      let started = ContinuousClock.now
      let early = await #expect(throws: AttachmentError.self) {
        try await fixture.pipeline.attachment(
          AttachmentRequest(
            url: try AttachmentURL(fixture.server.url("/head/\(sample)")), deadline: .now + .seconds(20),
            profile: .android))
      }
      #expect(early?.code == .unsupportedType, "\(sample): \(early?.description ?? "")")
      #expect(ContinuousClock.now - started < .seconds(10), "\(sample): refused before the body came")

      let error = await #expect(throws: AttachmentError.self) {
        try await fixture.pipeline.attachment(Self.request(url, .android))
      }

      #expect(error?.code == .unsupportedType, "\(sample)")
      #expect(
        error?.message.hasPrefix("The android profile takes JPEG and PNG only") == true,
        "\(error?.message ?? "")")
      // The same file is accepted for iOS from the same cache
      let ios = try await fixture.pipeline.attachment(Self.request(url, .ios))
      #expect(ios.validation.rescued == nil && ios.category != .image, "\(sample)")
    }
  }

  @Test("android: an animated GIF becomes a still")
  func androidAnimation() async throws {
    let fixture = try PipelineFixture("profiles")
    defer { fixture.close() }
    let url = fixture.serve(Samples.path("gif-animated.gif"), name: "anim")

    let attachment = try await fixture.pipeline.attachment(Self.request(url, .android))

    #expect([.jpeg, .png].contains(attachment.type))
    #expect((attachment.validation.frames ?? 1) == 1)
    #expect(attachment.validation.rescued?.from == "image/gif")
  }

  @Test("one cache, two profiles: an ios caller is never served the android derivative, nor the reverse")
  func derivativesStayInTheirProfile() async throws {
    // Given a 1600×1067 JPEG iOS accepts as it is, and android downscales
    let fixture = try PipelineFixture("profiles")
    defer { fixture.close() }
    let photo = try await Self.thumbnail(
      try await LargeSamples.path("jpeg-24mp.jpg"), side: 1600, to: "photo.jpg", in: fixture.scratch)
    let url = fixture.serve(photo, name: "photo")
    let original = try Validator().validate(file: photo)

    // When android asks first, then ios, each twice, and a second pipeline over the same cache
    let android = try await fixture.pipeline.attachment(Self.request(url, .android))
    let ios = try await fixture.pipeline.attachment(Self.request(url, .ios))
    let androidAgain = try await fixture.pipeline.attachment(Self.request(url, .android))
    let iosAgain = try await fixture.pipeline.attachment(Self.request(url, .ios))
    let other = try AttachmentPipeline(configuration: fixture.pipeline.configuration)
    let otherIOS = try await other.attachment(Self.request(url, .ios))
    let otherAndroid = try await other.attachment(Self.request(url, .android))

    // Then ios gets the original's bytes every time, android its derivative every time
    #expect(android.validation.width == 1024 && android.sha256 != original.sha256)
    for (name, answer) in [("ios", ios), ("ios again", iosAgain), ("another pipeline's ios", otherIOS)] {
      #expect(answer.sha256 == original.sha256, "\(name)")
      #expect(answer.validation.width == 1600, "\(name)")
    }
    for (name, answer) in [("android again", androidAgain), ("another pipeline's android", otherAndroid)] {
      #expect(answer.sha256 == android.sha256, "\(name)")
      #expect(answer.source == .cache, "\(name)")
    }
    #expect(ios.source == .network && iosAgain.source == .cache && otherIOS.source == .cache)
  }

  @Test("ios-compact: an accepted 3000-pixel JPEG is downscaled to 2048; an animated GIF is left as it is")
  func compact() async throws {
    let fixture = try PipelineFixture("profiles")
    defer { fixture.close() }
    let photo = try await Self.thumbnail(
      try await LargeSamples.path("jpeg-24mp.jpg"), side: 3000, to: "photo.jpg", in: fixture.scratch)
    let gif = fixture.scratch.path + "/big.gif"
    let made = await CleanSpawn.run([
      "/usr/bin/ffmpeg", "-v", "error", "-f", "lavfi", "-i", "testsrc=s=2400x1600:d=0.2:r=10", gif,
    ])
    try #require(made == 0, "ffmpeg failed with \(made)")

    let image = try await fixture.pipeline.attachment(
      Self.request(fixture.serve(photo, name: "photo"), .iOSCompact()))
    let animation = try await fixture.pipeline.attachment(
      Self.request(fixture.serve(gif, name: "anim"), .iOSCompact()))

    #expect(image.type == .jpeg && image.validation.width == 2048)
    #expect(image.validation.rescued?.actions == [.downscaled])
    #expect(animation.type == .gif && animation.validation.width == 2400)
    #expect(animation.validation.rescued == nil)
    #expect((animation.validation.frames ?? 0) > 1)
  }

  @Test("a profile name that is not one is refused with unknown_profile, naming the profiles")
  func unknownName() throws {
    let error = #expect(throws: AttachmentError.self) { try AttachmentProfile(named: "windows") }
    #expect(error?.code == .unknownProfile)
    #expect(error?.message == "There is no profile \"windows\"; the profiles are android, ios, ios-compact.")
  }
}
