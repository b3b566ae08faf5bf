import Foundation
import TestTraits
import Testing

@testable import AttachmentKit

/// The format table (``ProbedFormat/row``) against the real samples and libmagic: the one place
/// a format is added must be right on its own.
@Suite("The format table", .cpuBound)
struct FormatTableTests {
  @Test("every media type comes from a row, or from the ISO BMFF rule (MP4, MOV, M4A)")
  func everyTypeHasASource() {
    let fromRows = Set(ProbedFormat.allCases.compactMap(\.row.mediaType))
    #expect(fromRows.union([.mp4, .mov, .m4a]) == Set(MediaType.allCases))
    #expect(ProbedFormat.allCases.filter { $0.row.mediaType == nil } == [.isoBMFF])
  }

  @Test("the frame-synced audio formats, which have no magic, are tried last")
  func identificationOrder() {
    #expect(Array(ProbedFormat.allCases.suffix(2)) == [.mp3, .adts])
  }

  @Test(
    "each accepted sample becomes its row's media type, and libmagic's name for it is in that row (or octet-stream)",
    arguments: Samples.accepted)
  func rowsMatchTheSamples(_ sample: Samples.Entry) throws {
    let file = try FileBytes(path: Samples.path(sample.file))
    let report = try #require(MediaProbe.identify(file: file), "no probe identified \(sample.file)")
    let row = report.format.row
    let validation = try Validator().validate(file: Samples.path(sample.file))
    #expect(row.mediaType == nil || row.mediaType == validation.type, "\(sample.file)")
    // An accepted file is never named by libmagic; asked here, its name must be in the row.
    #expect(validation.detectedMIME == nil, "\(sample.file): libmagic was asked for an accepted file")
    let tag = file.bytes(at: 0, count: 10).withUnsafeBytes { MediaProbe.id3v2Length($0) }
    let window = file.bytes(at: Int64(tag), count: SniffWindow.maximumBytes)
    let detected = window.withUnsafeBytes { MagicSniffer.mimeType(of: $0) } ?? "none"
    #expect(
      row.magicNames.contains(detected) || detected == "application/octet-stream",
      "\(sample.file): libmagic says \(detected), not in \(row.magicNames)")
    #expect(SniffWindow.plausibleMIMETypes.contains(detected))
  }

  @Test("every ISO brand marks one format only, and each brand is four characters")
  func brandsAreUnique() {
    let refused = ForeignFormat.allCases.flatMap(\.isoBrands)
    let accepted = MediaType.allCases.flatMap(\.isoBrands)
    #expect(Set(refused + accepted).count == refused.count + accepted.count)
    #expect((refused + accepted).allSatisfy { $0.utf8.count == 4 })
    #expect(ForeignFormat.byISOBrand.count == refused.count)
  }

  @Test("a 3GPP2 file (KDDI's 'kddi', or '3g2a') with AAC audio is refused as video/3gpp2, like 3GPP")
  func threeGPP2Brands() throws {
    // Issue 27 item 10: 'kddi' was accepted as M4A while '3g2a' was refused (both 3GPP2).
    for brand in ["kddi", "3g2a"] {
      let movie = ProbeFixtures.movie(major: brand, compatible: [brand, "3g2a"], video: false, audio: true)
      let prefix = try #require(MediaProbe.identify(bytes: movie))
      guard case .failure(let early) = Classifier.category(forPrefix: prefix, detected: nil) else {
        Issue.record("\(brand): the streaming sniffer let it through")
        continue
      }
      #expect(early.code == .unsupportedType && early.detected == "video/3gpp2")
      guard case .failure(let error) = try DurationTests.validate(movie, as: "\(brand).3g2") else {
        Issue.record("\(brand): accepted")
        continue
      }
      #expect(error.code == .unsupportedType, "\(error)")
      #expect(error.message.contains("video/3gpp2 (ISO brand '\(brand)')"), "\(error.message)")
    }
  }

  @Test(
    "libvips opens each image sample with the loader its row names, and a rescue converts what the rows say")
  func loadersMatchLibvips() throws {
    let vips = try #require(Libvips.started(concurrency: 1), "libvips is not installed")
    let samples: [(file: String, loader: VipsLoader?)] = [
      ("jpeg-baseline.jpg", MediaType.jpeg.vipsLoader), ("png-rgba.png", MediaType.png.vipsLoader),
      ("gif-animated.gif", MediaType.gif.vipsLoader), ("tiff-little-endian.tiff", MediaType.tiff.vipsLoader),
      ("webp-lossy.webp", ForeignFormat.webp.vipsLoader), ("heic-still.heic", ForeignFormat.heic.vipsLoader),
      ("avif-still.avif", ForeignFormat.avif.vipsLoader), ("jpeg2000.jp2", ForeignFormat.jpeg2000.vipsLoader),
      ("jpegxl.jxl", ForeignFormat.jpegXL.vipsLoader),
    ]
    for sample in samples {
      let loader = try #require(sample.loader, "\(sample.file): no loader in its row")
      let found = vips.findLoad(Samples.path(sample.file)).map { String(cString: $0) }
      vips.errorClear()
      #expect(found == loader.className, "\(sample.file)")
      #expect(ImageRescuer.loaders[loader.className]?.loader == loader)
    }
    #expect(
      ImageRescuer.convertibleTypes == [
        "image/webp", "image/heic", "image/heif", "image/avif", "image/jp2", "image/jpx",
        "image/x-jp2-codestream", "image/jxl",
      ])
    #expect(ImageRescuer.reencodedTypes == ["image/jpeg", "image/png", "image/gif", "image/tiff"])
    #expect(ImageRescuer.loaders.count == 8)
    // JPEG 2000's and JPEG XL's loaders are the untrusted loaders allowed (libvips blocks the rest)
    #expect(ImageRescuer.untrustedLoaders == ["VipsForeignLoadJp2kFile", "VipsForeignLoadJxlFile"])
  }
}
