import CVips
import CWorkerIO
import Dispatch
import PosixLock

/// libvips, loaded on the first rescue with `dlopen`: it maps about 90 shared libraries (glib,
/// libheif, libwebp, libjpeg, …), which a cache hit or an ordinary miss must never pay for.
/// The functions are resolved here once; the variadic ones are called through the typed
/// wrappers of the `CVips` shim.
struct Libvips: @unchecked Sendable {
  /// The loaded library, or `nil` when `libvips.so.42` is not installed or lacks a function.
  static let shared: Libvips? = Libvips()

  let initialise: @convention(c) (UnsafePointer<CChar>?) -> Int32
  let blockUntrusted: @convention(c) (Int32) -> Void
  let setConcurrency: @convention(c) (Int32) -> Void
  let setCacheMax: @convention(c) (Int32) -> Void
  let errorBuffer: @convention(c) () -> UnsafePointer<CChar>?
  let errorClear: @convention(c) () -> Void
  let findLoad: @convention(c) (UnsafePointer<CChar>?) -> UnsafePointer<CChar>?
  let width: @convention(c) (OpaquePointer?) -> Int32
  let height: @convention(c) (OpaquePointer?) -> Int32
  let pages: @convention(c) (OpaquePointer?) -> Int32
  let orientationSwaps: @convention(c) (OpaquePointer?) -> Int32
  let unref: @convention(c) (OpaquePointer?) -> Void
  let newFromFile: UnsafeMutableRawPointer
  let thumbnail: UnsafeMutableRawPointer
  let thumbnailImage: UnsafeMutableRawPointer
  let colourspace: UnsafeMutableRawPointer
  let jpegSave: UnsafeMutableRawPointer
  let pngSave: UnsafeMutableRawPointer
  let gifSave: UnsafeMutableRawPointer
  let hasAlpha: @convention(c) (OpaquePointer?) -> Int32
  /// `vips_image_set_kill`: stops the computation of an image (its pipeline fails).
  let setKill: @convention(c) (OpaquePointer?, Int32) -> Void
  /// `vips_operation_block_set`: blocks (1) or unblocks (0) an operation class and its
  /// subclasses.
  let operationBlock: @convention(c) (UnsafePointer<CChar>?, Int32) -> Void
  /// `vips_version`: 0 the major, 1 the minor version (the module directory's name).
  let version: @convention(c) (Int32) -> Int32
  /// glib's `g_module_open`, which runs a libvips module's `g_module_check_init` (it registers
  /// the module's loaders and makes the module resident).
  let moduleOpen: @convention(c) (UnsafePointer<CChar>?, Int32) -> OpaquePointer?
  /// glib's `g_log_set_writer_func`, which a worker points at its library log
  /// (``LibraryLog``); `nil` when glib lacks it.
  let setLogWriter: UnsafeMutableRawPointer?

  // flat table: one dlsym lookup per libvips (and glib) function the rescue calls, then one
  // assignment per property.
  private init?() {
    typealias Image = @convention(c) (OpaquePointer?) -> Int32
    guard let library = SharedLibrary(["libvips.so.42", "libvips.so"], lazy: true),
      let initialise = library.function(
        "vips_init", as: (@convention(c) (UnsafePointer<CChar>?) -> Int32).self),
      let blockUntrusted = library.function(
        "vips_block_untrusted_set", as: (@convention(c) (Int32) -> Void).self),
      let setConcurrency = library.function(
        "vips_concurrency_set", as: (@convention(c) (Int32) -> Void).self),
      let setCacheMax = library.function("vips_cache_set_max", as: (@convention(c) (Int32) -> Void).self),
      let errorBuffer = library.function(
        "vips_error_buffer", as: (@convention(c) () -> UnsafePointer<CChar>?).self),
      let errorClear = library.function("vips_error_clear", as: (@convention(c) () -> Void).self),
      let findLoad = library.function(
        "vips_foreign_find_load",
        as: (@convention(c) (UnsafePointer<CChar>?) -> UnsafePointer<CChar>?).self),
      let width = library.function("vips_image_get_width", as: Image.self),
      let height = library.function("vips_image_get_height", as: Image.self),
      let pages = library.function("vips_image_get_n_pages", as: Image.self),
      let orientationSwaps = library.function("vips_image_get_orientation_swap", as: Image.self),
      let hasAlpha = library.function("vips_image_hasalpha", as: Image.self),
      // glib's, found through libvips' own dependencies.
      let unref = library.function("g_object_unref", as: (@convention(c) (OpaquePointer?) -> Void).self),
      let setKill = library.function(
        "vips_image_set_kill", as: (@convention(c) (OpaquePointer?, Int32) -> Void).self),
      let version = library.function("vips_version", as: (@convention(c) (Int32) -> Int32).self),
      let operationBlock = library.function(
        "vips_operation_block_set", as: (@convention(c) (UnsafePointer<CChar>?, Int32) -> Void).self),
      let moduleOpen = library.function(
        "g_module_open", as: (@convention(c) (UnsafePointer<CChar>?, Int32) -> OpaquePointer?).self),

      let newFromFile = library.symbol("vips_image_new_from_file"),
      let thumbnail = library.symbol("vips_thumbnail"),
      let thumbnailImage = library.symbol("vips_thumbnail_image"),
      let colourspace = library.symbol("vips_colourspace"),
      let jpegSave = library.symbol("vips_jpegsave"),
      let pngSave = library.symbol("vips_pngsave"),
      let gifSave = library.symbol("vips_gifsave")
    else { return nil }
    self.initialise = initialise
    self.blockUntrusted = blockUntrusted
    self.setConcurrency = setConcurrency
    self.setCacheMax = setCacheMax
    self.errorBuffer = errorBuffer
    self.errorClear = errorClear
    self.findLoad = findLoad
    self.width = width
    self.height = height
    self.pages = pages
    self.orientationSwaps = orientationSwaps
    self.hasAlpha = hasAlpha
    self.unref = unref
    self.setKill = setKill
    self.version = version
    self.operationBlock = operationBlock
    self.moduleOpen = moduleOpen
    setLogWriter = library.symbol("g_log_set_writer_func")
    self.newFromFile = newFromFile
    self.thumbnail = thumbnail
    self.thumbnailImage = thumbnailImage
    self.colourspace = colourspace
    self.jpegSave = jpegSave
    self.pngSave = pngSave
    self.gifSave = gifSave
  }

  /// Whether ``start(concurrency:)`` succeeded; it runs once per process.
  private static let started = Locked<Bool?>(nil)

  /// libvips, initialised for untrusted input, or `nil` when it is missing or failed to start.
  ///
  /// The first call initialises the process-wide state: every untrusted loader (SVG,
  /// ImageMagick, PDF, …) blocked but those the tables allow (JPEG 2000's and JPEG XL's, in a
  /// worker the kernel confines), the operation cache off, and
  /// `concurrency` worker threads per image. Later calls keep that state.
  static func started(concurrency: Int) -> Libvips? {
    guard let vips = shared else { return nil }
    let ready = started.withLock { state -> Bool in
      if let state { return state }
      let ok = vips.initialise("attachmentkit") == 0
      if ok {
        blockUntrusted(vips)
        vips.setCacheMax(0)
        vips.setConcurrency(Int32(clamping: max(1, concurrency)))
      }
      state = ok
      return ok
    }
    return ready ? vips : nil
  }

  /// Blocks every untrusted operation libvips has registered, then unblocks the untrusted
  /// loaders the tables allow (``ImageRescuer/untrustedLoaders``).
  private static func blockUntrusted(_ vips: Libvips) {
    vips.blockUntrusted(1)
    for loader in ImageRescuer.untrustedLoaders { vips.operationBlock(loader, 0) }
  }

  /// The modules ``loadModule(_:)`` has tried, with whether each loaded.
  private static let modules = Locked<[String: Bool]>([:])

  /// Loads the libvips module `name` (`vips-NAME.so` in the `vips-modules-MAJOR.MINOR`
  /// directory next to the loaded libvips), once per process; returns whether this call
  /// loaded it (`false` when an earlier call tried, or it cannot be loaded).
  ///
  /// A rescue worker starts libvips with no module (its environment points `VIPSHOME` at no
  /// directory: see ``WorkerProcess``): libvips 8.14 loads every module it finds at
  /// `vips_init`, ImageMagick's, poppler's, JPEG XL's and OpenSlide's among them, about 40 ms
  /// of a worker's start for loaders the allowlist refuses anyway. The modules allowed loaders
  /// live in (``VipsLoader/module``: HEIF's, JPEG XL's) are loaded when a source needs them. In a
  /// process whose libvips loaded its modules itself, glib returns the module already open.
  func loadModule(_ name: String) -> Bool {
    Self.modules.withLock { loaded -> Bool in
      if loaded[name] != nil { return false }
      let library = ak_library_path(unsafeBitCast(initialise, to: UnsafeRawPointer.self))
      guard let file = library.map({ String(cString: $0) }), let slash = file.lastIndex(of: "/")
      else {
        loaded[name] = false
        return false
      }
      let path = "\(file[..<slash])/vips-modules-\(version(0)).\(version(1))/vips-\(name).so"
      // G_MODULE_BIND_LAZY, as libvips opens its modules.
      let ok = moduleOpen(path, 1) != nil
      loaded[name] = ok
      // Its classes were registered after libvips blocked the untrusted ones: block them, and
      // unblock the allowed ones, again.
      if ok { Self.blockUntrusted(self) }
      return ok
    }
  }

  /// The text of libvips' error buffer (its last errors, one per line), then cleared; the
  /// caller holds the rescue lock, so the buffer is its own.
  func takeError() -> String {
    let text = errorBuffer().map { String(cString: $0) } ?? ""
    errorClear()
    let lines = text.split(separator: "\n").map { $0.trimmingCharacters(in: " \t") }
    return lines.prefix(2).joined(separator: "; ")
  }
}
