import Foundation
import TestTraits
import Testing

@testable import AttachmentKit

/// Every bundled sample through the validator: real files, real libmagic, real probes.
@Suite("Validator on the bundled samples", .cpuBound)
struct ValidatorTests {
  @Test("the manifest is there and covers every accepted type")
  func manifestCoversTypes() {
    let types = Set(Samples.accepted.map(\.type))
    #expect(
      types == ["jpeg", "png", "gif", "tiff", "mp4", "mov", "mpeg", "mp3", "aac", "wav", "caf", "aiff"])
    #expect(Samples.refused.count >= 20)
  }

  @Test("every accepted sample gets its type, UTI and extension", arguments: Samples.accepted)
  func accepted(_ sample: Samples.Entry) throws {
    let validation = try Validator().validate(file: Samples.path(sample.file))
    #expect(validation.type.family == sample.type)
    #expect(validation.bytes == Int64(try Samples.bytes(sample.file).count))
    #expect(validation.sha256.count == 64)
    let expectedUTI: [String: String] = [
      "jpeg": "public.jpeg", "png": "public.png", "gif": "com.compuserve.gif", "tiff": "public.tiff",
      "mp4": "public.mpeg-4", "mov": "com.apple.quicktime-movie", "mpeg": "public.mpeg", "mp3": "public.mp3",
      "wav": "com.microsoft.waveform-audio", "caf": "com.apple.coreaudio-format", "aiff": "public.aiff-audio",
    ]
    if sample.type == "aac" {
      let container = sample.file.hasSuffix(".aac")
      #expect(validation.uti == (container ? "public.aac-audio" : "public.mpeg-4-audio"))
      #expect(validation.fileExtension == (container ? "aac" : "m4a"))
    } else {
      #expect(validation.uti == expectedUTI[sample.type])
    }
    let outside = validation.warnings.contains { $0.contains("outside Apple's published") }
    #expect(outside == !validation.type.isInApplesTable)
  }

  @Test("every near-miss is refused with its code and what it really is", arguments: Samples.refused)
  func refused(_ sample: Samples.Entry) {
    do {
      let validation = try Validator().validate(file: Samples.path(sample.file))
      Issue.record("accepted as \(validation.type)")
    } catch {
      #expect(error.code.rawValue == sample.expect, "\(error)")
      if sample.expect == "unsupported_type" {
        #expect(error.detected == sample.type)
      }
    }
  }

  @Test("image dimensions, GIF frames and video duration are read from the structure")
  func details() throws {
    let gif = try Validator().validate(file: Samples.path("gif-animated.gif"))
    #expect(gif.frames == 5)
    #expect(gif.width == 64 && gif.height == 48)
    let jpeg = try Validator().validate(file: Samples.path("jpeg-exif.jpg"))
    #expect(jpeg.width == 64 && jpeg.height == 48)
    let mp4 = try Validator().validate(file: Samples.path("mp4-isom.mp4"))
    let seconds = try #require(mp4.durationSeconds)
    #expect(abs(seconds - 2.0) < 0.2)
  }

  @Test("limits are configurable: a 2 s video over a 1 s limit is too long, a small image too large")
  func configurableLimits() throws {
    var limits = ValidationLimits()
    limits.maximumVideoSeconds = 1
    limits.maximumImageBytes = 100
    let validator = Validator(limits: limits)
    // Each must fail, and with its own code: a validator that ignored a limit fails the test.
    #expect(Self.code(validator, "mp4-isom.mp4") == .tooLong)
    #expect(Self.code(validator, "png-rgba.png") == .tooLarge)
    // And the same files pass the default limits, so the limits (not the files) refused them.
    #expect(Self.code(Validator(), "mp4-isom.mp4") == nil)
    #expect(Self.code(Validator(), "png-rgba.png") == nil)
  }

  /// The code `validator` refuses a sample with, or `nil` when it accepts it.
  private static func code(_ validator: Validator, _ name: String) -> AttachmentError.Code? {
    do {
      _ = try validator.validate(file: Samples.path(name))
      return nil
    } catch {
      return error.code
    }
  }
}
