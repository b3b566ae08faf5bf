import CVips
import Glibc

/// Turns a near-miss image into a valid notification attachment with libvips: WebP, HEIC/HEIF
/// and AVIF converted to JPEG (PNG when the image has alpha; GIF for an animation), images over
/// the byte or decoded-pixel limit downscaled, with EXIF orientation applied to the pixels and
/// the colours converted to sRGB.
///
/// Only an allowlist of libvips loaders is used (JPEG, PNG, GIF, TIFF, WebP, HEIF); every
/// loader libvips marks untrusted (SVG, ImageMagick, PDF, …) is blocked process-wide as well.
/// The decode budget is checked on the header before any pixel is decoded, so a pixel bomb
/// costs a header read, and so are the bounds on work the pixel count misses (scans, frames,
/// bytes per pixel: `ImageWorkBounds`); libvips' evaluation is stopped at the deadline
/// (`VipsDeadline`). Rescues run one at a time per process, to bound memory (`RescueGate`):
/// a rescue waits for its turn until its own deadline at most.
public struct ImageRescuer: Sendable {
  /// The rescue's own limits (source size, decode budget, longest side, JPEG quality).
  public var configuration: RescueConfiguration
  /// What the delivered file must meet.
  public var limits: ValidationLimits

  /// Makes a rescuer delivering files within `limits`.
  public init(
    configuration: RescueConfiguration = RescueConfiguration(), limits: ValidationLimits = ValidationLimits()
  ) {
    self.configuration = configuration
    self.limits = limits
  }

  /// The MIME types (as libmagic names them) that are converted when refused as
  /// `unsupported_type`: every `ForeignFormat` a libvips loader reads.
  public static let convertibleTypes: Set<String> = Set(
    ForeignFormat.allCases.filter { $0.vipsLoader != nil }.map(\.mime))

  /// The accepted image types (JPEG, PNG, GIF, TIFF) re-encoded when a file of one is refused
  /// as `unsupported_type` because its structure is not valid (a BigTIFF, a GIF whose LZW code
  /// size is out of range, a TIFF whose IFD chain loops): libvips' own loader for the type
  /// reads what it can, and what it delivers is validated again. A file cut short is refused
  /// `truncated`, which no rescue takes.
  public static let reencodedTypes: Set<String> = Set(
    MediaType.allCases.filter { $0.vipsLoader != nil }.map(\.mime))

  /// libvips loaders a rescue may use, by class name, with the MIME type each reads: the
  /// loaders ``MediaType`` and ``ForeignFormat`` name (the first row naming a loader names
  /// what it reads).
  static let loaders: [String: (mime: String, loader: VipsLoader)] = Dictionary(
    MediaType.allCases.compactMap { type in type.vipsLoader.map { ($0.className, (type.mime, $0)) } }
      + ForeignFormat.allCases.compactMap { format in
        format.vipsLoader.map { ($0.className, (format.mime, $0)) }
      },
    uniquingKeysWith: { first, _ in first })

  /// The libvips modules the allowed loaders live in.
  static let modules = Set(loaders.values.compactMap(\.loader.module)).sorted()

  /// The class names of the allowed loaders libvips marks untrusted (JPEG 2000's, JPEG XL's):
  /// the ones a worker unblocks after blocking the untrusted (see ``Libvips``).
  static let untrustedLoaders = loaders.values.map(\.loader).filter(\.isUntrusted).map(\.className).sorted()

  /// Loads the module of the loader the refusal's format names (HEIC's, JPEG XL's), else every
  /// module an allowed loader lives in; returns whether one was loaded now.
  private static func loadModules(_ vips: Libvips, for refusal: Refusal) -> Bool {
    if let module = refusal.format.flatMap(ForeignFormat.named)?.vipsLoader?.module, vips.loadModule(module) {
      return true
    }
    var added = false
    for module in modules { added = vips.loadModule(module) || added }
    return added
  }

  /// This rescuer's ``Rescuer/name``, stored with every file it delivers.
  public static let name = "image"

  /// Validates a local file and, when the validator refuses it in a way a rescue can undo,
  /// rescues it into `output`.
  ///
  /// - Returns: the file's own validation (``Validation/rescued`` is `nil`, nothing is
  ///   written) when it is acceptable as it is; otherwise the delivered file's.
  /// - Throws: the validator's refusal when no rescue applies, or what
  ///   ``rescue(file:refusedWith:to:deadline:)`` throws.
  public func attachment(
    fromFile path: String, rescuingInto output: String, deadline: ContinuousClock.Instant? = nil
  ) throws(AttachmentError) -> Validation {
    try [self].attachment(fromFile: path, rescuingInto: output, limits: limits, deadline: deadline)
  }

  /// Rescues a local file the validator refused with `refusal`, writing the delivered file to
  /// `output` (created or replaced), and validates what it wrote.
  ///
  /// - Parameters:
  ///   - path: the refused file.
  ///   - refusal: the validator's refusal (see ``canRescue(_:)``).
  ///   - output: where the delivered file goes.
  ///   - deadline: checked between steps, and libvips' evaluation is stopped when it passes.
  /// - Returns: the validation of the delivered file, with ``Validation/rescued`` set.
  /// - Throws: `too_large` (a source over ``RescueConfiguration/maximumSourceBytes``),
  ///   `too_many_pixels` (over the decode budget), `too_complex` (over a bound on decoding
  ///   work: scans, frames, bytes per pixel), `deadline_exceeded`, `io_error`, or
  ///   `refusal` itself when libvips is missing, no allowed loader reads the file, or it does
  ///   not decode (a truncated file among them). `output` is removed on failure.
  public func rescue(
    file path: String, refusedWith refusal: Refusal, to output: String,
    deadline: ContinuousClock.Instant? = nil
  ) throws(AttachmentError) -> Validation {
    try LocalRescue.rescue(path, into: output, limits: limits, deadline: deadline) {
      (source, bytes, target) throws(AttachmentError) in
      try rescue(
        RescueJob(
          source: source, bytes: bytes, refusal: refusal, output: target, limits: limits, deadline: deadline))
    }
  }

  /// Decodes the job's source and writes the delivered file to its output, within the job's
  /// limits. Runs libvips in the process's one image-rescue turn (``RescueGate/image``): the
  /// worker's side of ``rescue(_:)``, never called in a process that serves requests.
  func convert(_ job: RescueJob) throws(AttachmentError) -> Rescue {
    if job.bytes > configuration.maximumSourceBytes {
      throw AttachmentError(
        .tooLarge,
        "The image is \(job.bytes) bytes, over the rescue's source limit of \(configuration.maximumSourceBytes)."
      )
    }
    guard let vips = Libvips.started(concurrency: configuration.concurrency) else {
      throw job.refusal.notRescued("libvips (libvips42) is not installed")
    }
    return try RescueGate.image.run(limit: 1, deadline: job.deadline) {
      () throws(AttachmentError) -> Rescue in
      try Self.checkTime(job.deadline)
      let header = try readHeader(vips, job)
      let plan = RescuePlan(
        width: header.width, height: header.height, bytes: job.bytes, hasAlpha: header.hasAlpha,
        animated: header.frames > 1, frames: header.frames, limits: job.limits, configuration: configuration)
      return try encode(vips, job, header: header, plan: plan)
    }
  }

  /// What a source's header says, read before any pixel is decoded.
  private struct SourceHeader {
    let width: Int
    let height: Int
    /// Frames decoded: the pages of an animation its loader reads whole, 1 otherwise.
    let frames: Int
    let hasAlpha: Bool
    /// The MIME type of what the loader reads (the source's name when libmagic gave none).
    let loaderMIME: String
    /// The loader that reads it.
    let loader: VipsLoader
  }

  /// Finds an allowed loader for the job's source and reads its header, refusing a source over
  /// the decode budget (`too_many_pixels`) before it is decoded.
  private func readHeader(_ vips: Libvips, _ job: RescueJob) throws(AttachmentError) -> SourceHeader {
    vips.errorClear()
    var found = vips.findLoad(job.source).map { String(cString: $0) }
    if found.map({ Self.loaders[$0] == nil }) ?? true, Self.loadModules(vips, for: job.refusal) {
      // A format whose loader is in a module a worker had not loaded yet (HEIF's, JPEG XL's).
      vips.errorClear()
      found = vips.findLoad(job.source).map { String(cString: $0) }
    }
    guard let loaderName = found, let (loaderMIME, loader) = Self.loaders[loaderName] else {
      vips.errorClear()
      throw job.refusal.notRescued("no allowed libvips loader reads it")
    }
    try checkWebPFrames(job)
    if loaderName == "VipsForeignLoadJp2kFile" {
      // OpenJPEG allocates for what the header declares as it reads it: bounded first.
      try ImageWorkBounds(configuration: configuration).checkJPEG2000(
        path: job.source, detected: job.refusal.format ?? loaderMIME)
    }
    guard let image = ak_vips_open_header(vips.newFromFile, job.source) else {
      throw job.refusal.notRescued("libvips cannot read its header: \(vips.takeError())")
    }
    let width = Int(vips.width(image))
    let height = Int(vips.height(image))
    let pages = max(1, Int(vips.pages(image)))
    let hasAlpha = vips.hasAlpha(image) != 0
    vips.unref(image)

    // A rescue that delivers stills decodes the first frame only.
    let frames = loader.readsAnimation && configuration.keepsAnimation ? pages : 1
    let (pixels, overflow) = Int64(width).multipliedReportingOverflow(by: Int64(height))
    let (total, overflowFrames) = pixels.multipliedReportingOverflow(by: Int64(frames))
    if overflow || overflowFrames || total > configuration.maximumSourcePixels {
      throw AttachmentError(
        .tooManyPixels,
        "The image is \(width)×\(height) pixels\(frames > 1 ? " × \(frames) frames" : ""), over the rescue's decode budget of \(configuration.maximumSourcePixels) pixels.",
        detected: job.refusal.format ?? loaderMIME)
    }
    try ImageWorkBounds(configuration: configuration).check(
      ImageWorkBounds.Source(
        path: job.source, loader: loaderName, width: Int64(width), height: Int64(height),
        frames: Int64(frames),
        bytes: job.bytes),
      detected: job.refusal.format ?? loaderMIME)
    return SourceHeader(
      width: width, height: height, frames: frames, hasAlpha: hasAlpha, loaderMIME: loaderMIME, loader: loader
    )
  }

  /// Encodes the plan's output, downscaling further (up to four passes) until it is within the
  /// image byte limit.
  private func encode(
    _ vips: Libvips, _ job: RescueJob, header: SourceHeader, plan: RescuePlan
  ) throws(AttachmentError) -> Rescue {
    let sizeLimit = job.limits.maximumImageBytes
    var box = plan.box
    for _ in 0..<4 {
      try Self.checkTime(job.deadline)
      try write(vips, job, box: box, plan: plan, loader: header.loader)
      var written = stat()
      guard stat(job.output, &written) == 0 else {
        throw AttachmentError(.ioError, "The rescued file was not written.")
      }
      let size = Int64(written.st_size)
      if size <= sizeLimit {
        let from = job.refusal.format ?? header.loaderMIME
        var actions: [Rescue.Action] = []
        if plan.output.mime != from { actions.append(.converted) }
        if plan.downscales || box < plan.box { actions.append(.downscaled) }
        if actions.isEmpty { actions = [.converted] }  // re-encoded: the bytes changed form
        return Rescue(
          rescuer: Self.name, from: from, actions: actions, originalBytes: job.bytes,
          originalWidth: header.width,
          originalHeight: header.height)
      }
      box = RescuePlan.smallerBox(than: box, bytes: size, limit: sizeLimit)
    }
    throw AttachmentError(.tooLarge, "The image stays over \(sizeLimit) bytes however it is downscaled.")
  }

  /// One libvips pass: thumbnail into `box`, sRGB, save in the plan's format.
  private func write(
    _ vips: Libvips, _ job: RescueJob, box: Int, plan: RescuePlan, loader: VipsLoader
  ) throws(AttachmentError) {
    let (source, output, refusal) = (job.source, job.output, job.refusal)
    var thumbnail: OpaquePointer?
    // Every frame of an animation: the loader option in brackets after the path.
    let input = plan.output == .gif ? source + "[n=-1]" : source
    let side = Int32(clamping: box)
    let built: Int32
    if loader.shrinksOnLoad {
      built = ak_vips_thumbnail(vips.thumbnail, input, &thumbnail, side, side)
    } else if let opened = ak_vips_open_header(vips.newFromFile, input) {
      built = ak_vips_thumbnail_image(vips.thumbnailImage, opened, &thumbnail, side, side)
      vips.unref(opened)  // the thumbnail holds its own reference
    } else {
      built = -1
    }
    guard built == 0, let thumbnail else {
      throw refusal.notRescued("libvips cannot decode it: \(vips.takeError())")
    }
    defer { vips.unref(thumbnail) }
    var srgb: OpaquePointer?
    guard ak_vips_to_srgb(vips.colourspace, thumbnail, &srgb) == 0, let image = srgb else {
      throw refusal.notRescued("libvips cannot convert it to sRGB: \(vips.takeError())")
    }
    defer { vips.unref(image) }
    let quality = Int32(clamping: configuration.jpegQuality)
    let (saved, stopped) = VipsDeadline.watching([thumbnail, image], in: vips, until: job.deadline) {
      switch plan.output {
      case .jpeg: ak_vips_jpegsave(vips.jpegSave, image, output, quality)
      case .png: ak_vips_pngsave(vips.pngSave, image, output)
      case .gif: ak_vips_gifsave(vips.gifSave, image, output)
      }
    }
    if stopped {
      vips.errorClear()
      // A save that succeeded anyway finished past the deadline (the kill came after libvips'
      // last look at it, or a check used it up without stopping the save): late all the
      // same, but libvips was not stopped.
      throw AttachmentError(
        .deadlineExceeded,
        saved == 0
          ? "The deadline passed while the image was rescued."
          : "The deadline passed while the image was rescued; libvips was stopped.")
    }
    guard saved == 0 else {
      // Decoding happens here, as the saver pulls pixels: a truncated source fails now.
      throw refusal.notRescued("libvips cannot decode it: \(vips.takeError())")
    }
  }

  /// Refuses an animated WebP of more frames than the rescue allows (`too_complex`), counted
  /// from its RIFF chunks (``WebPFrames``): before any worker starts (``rescue(_:)`` calls it
  /// in the caller's process; it parses chunk headers only) and again in the worker before
  /// libvips reads a header. Any other file passes. `deadline_exceeded` when the job's deadline
  /// passes during the count.
  func checkWebPFrames(_ job: RescueJob) throws(AttachmentError) {
    guard let file = try? FileBytes(path: job.source),
      let frames = try WebPFrames.count(in: file, deadline: job.deadline),
      frames > configuration.maximumFrames
    else { return }
    throw AttachmentError(
      .tooComplex,
      "The animation has \(frames) frames, over the rescue's limit of \(configuration.maximumFrames).",
      detected: job.refusal.format ?? "image/webp")
  }

  private static func checkTime(_ deadline: ContinuousClock.Instant?) throws(AttachmentError) {
    if let deadline, ContinuousClock.now >= deadline {
      throw AttachmentError(.deadlineExceeded, "The deadline passed while the image was rescued.")
    }
  }
}
