/// The decoding work a rescue allows beyond the pixel budget, checked before libvips decodes a
/// pixel: the scans of a progressive JPEG, the frames of an animation, the pixels a progressive
/// JPEG may hold in memory, and the bytes a source may spend per pixel.
///
/// The pixel budget alone bounds neither time nor memory: a progressive JPEG is refined once
/// per scan (work scans × pixels, in one call libvips cannot interrupt) with every coefficient
/// held (about 3.4 bytes a pixel: 762 MiB at 225 MP, measured); an animation costs per frame as
/// well as per pixel (100,000 frames of 16×16 took 28 s of CPU).
struct ImageWorkBounds {
  /// The limits, from ``RescueConfiguration``.
  let configuration: RescueConfiguration

  /// What a header said, with the loader that read it.
  struct Source {
    let path: String
    let loader: String
    let width: Int64
    let height: Int64
    let frames: Int64
    let bytes: Int64
  }

  /// Refuses a source whose decoding would take more than the configuration allows.
  /// - Throws: `too_complex` naming the bound (scans, frames, bytes per pixel) or
  ///   `too_many_pixels` for a progressive JPEG over its own pixel budget; `detected` is
  ///   passed into each.
  func check(_ source: Source, detected: String?) throws(AttachmentError) {
    // Products saturate: the pixel budget was checked first, but a bound must not trap on input.
    let pixels =
      source.width.multipliedReportingOverflow(by: source.height).overflow
      ? Int64.max : source.width * source.height
    if source.frames > Int64(configuration.maximumFrames) {
      throw AttachmentError(
        .tooComplex,
        "The animation has \(source.frames) frames, over the rescue's limit of \(configuration.maximumFrames).",
        detected: detected)
    }
    let (product, overflow) = pixels.multipliedReportingOverflow(by: max(1, source.frames))
    let decoded = overflow ? Int64.max : product
    if source.frames > 1, decoded > configuration.maximumAnimationSourcePixels {
      throw AttachmentError(
        .tooComplex,
        "The animation's \(source.frames) frames hold \(decoded) pixels in all, over the rescue's budget of \(configuration.maximumAnimationSourcePixels) for animations.",
        detected: detected)
    }
    if source.bytes > Self.bytesPerPixelFloor,
      source.bytes / max(1, decoded) > configuration.maximumBytesPerPixel
    {
      throw AttachmentError(
        .tooComplex,
        "The image spends \(source.bytes / max(1, decoded)) bytes per pixel (\(source.bytes) bytes for \(decoded) pixels), over the rescue's limit of \(configuration.maximumBytesPerPixel).",
        detected: detected)
    }
    guard source.loader.hasPrefix("VipsForeignLoadJpeg") else { return }
    try checkScans(source, pixels: pixels, detected: detected)
  }

  /// Sources of at most this many bytes are never refused for their bytes per pixel: metadata
  /// (an ICC profile, EXIF with a preview) can outweigh a small image's pixels. 8 MB.
  static let bytesPerPixelFloor: Int64 = 8_000_000

  private func checkScans(_ source: Source, pixels: Int64, detected: String?) throws(AttachmentError) {
    guard let file = try? FileBytes(path: source.path) else { return }
    let scans = JPEGScans(of: file, countingUpTo: configuration.maximumScans)
    if scans.count > configuration.maximumScans {
      throw AttachmentError(
        .tooComplex,
        "The JPEG has more than \(configuration.maximumScans) scans, the rescue's limit (each scan is another decoding pass over every pixel).",
        detected: detected)
    }
    if scans.progressive, pixels > configuration.maximumProgressivePixels {
      throw AttachmentError(
        .tooManyPixels,
        "The progressive JPEG is \(source.width)×\(source.height) pixels, over the rescue's budget of \(configuration.maximumProgressivePixels) pixels for progressive JPEGs (their decoder holds every coefficient in memory).",
        detected: detected)
    }
  }
}
