// swift-tools-version:6.0
import PackageDescription

let package = Package(
  name: "AttachmentKit",
  products: [
    .library(name: "AttachmentKit", targets: ["AttachmentKit"]),
    // Foundation's URL for the library's front door, in a module of its own (below).
    .library(name: "AttachmentKitFoundation", targets: ["AttachmentKitFoundation"]),
    .executable(name: "attachkit", targets: ["attachkit"]),
    .executable(name: "attachkit-rescue-worker", targets: ["attachkit-rescue-worker"]),
    .executable(name: "sample-server", targets: ["SampleServer"]),
    .executable(name: "extension-runner", targets: ["ExtensionRunner"]),
    .executable(name: "attachkit-bench", targets: ["AttachKitBench"]),
  ],
  targets: [
    // System libraries: a module map and a shim header each (typed wrappers, no logic).
    // libcurl and libmagic supply headers only: the library opens them with dlopen on first
    // use, so a cache hit never maps them (about 6 ms of process start); see
    // Sources/AttachmentKit/Fetch/Libcurl.swift. Their headers sit on the default include path.
    // The library opens libcrypto the same way (Support/Libcrypto.swift, no header needed);
    // CCrypto links it for the extension runner's AES-GCM.
    .systemLibrary(
      name: "CCurl",
      providers: [.apt(["libcurl4-openssl-dev"])]),
    .systemLibrary(
      name: "CMagic",
      providers: [.apt(["libmagic-dev"])]),
    // libvips is opened with dlopen on the first rescue (Sources/AttachmentKit/Rescue/Libvips.swift);
    // its shim declares the few types it needs, since vips.h needs glib's include paths.
    .systemLibrary(
      name: "CVips",
      providers: [.apt(["libvips-dev"])]),
    // FFmpeg's libraries are opened with dlopen on the first media rescue
    // (Sources/AttachmentKit/Rescue/Media/Libav.swift): headers only, for the types.
    .systemLibrary(
      name: "CAV",
      providers: [
        .apt(["libavformat-dev", "libavcodec-dev", "libavutil-dev", "libswscale-dev", "libswresample-dev"])
      ]),
    // zlib inflates a PNG's image data while it is validated (Sources/AttachmentKit/Validation/
    // Probes/Zlib.swift): headers only, for z_stream; opened with dlopen on the first PNG.
    .systemLibrary(
      name: "CZlib",
      providers: [.apt(["zlib1g-dev"])]),
    // LMDB holds the cache's per-URL records (Sources/AttachmentKit/Cache/RecordStore.swift). It is
    // linked, not opened with dlopen: a hit reads its record from it, and it is ~100 KB.
    .systemLibrary(
      name: "CLMDB",
      providers: [.apt(["liblmdb-dev"])]),
    .systemLibrary(
      name: "CCrypto", pkgConfig: "libcrypto",
      providers: [.apt(["libssl-dev"])]),
    // libmicrohttpd supplies headers only, like libcurl: `attachkit serve` opens it with dlopen
    // when it starts (Sources/AttachmentServer/MicroHTTPD.swift), so no other command maps it.
    .systemLibrary(
      name: "CMicroHTTPD",
      providers: [.apt(["libmicrohttpd-dev"])]),

    // The rescue workers' system calls: spawn, descriptor passing, limits, and the seccomp filter
    // (libseccomp is opened with dlopen in the worker only).
    .target(name: "CWorkerIO", linkerSettings: [.linkedLibrary("dl")]),
    // A pthread mutex ThreadSanitizer can see (the standard Mutex uses futexes it cannot).
    .target(name: "PosixLock"),
    .target(
      name: "AttachmentKit",
      dependencies: ["CAV", "CCurl", "CLMDB", "CMagic", "CVips", "CWorkerIO", "CZlib", "PosixLock"]),
    // `attachment(for: URL)` and `AttachmentRequest(url: URL, …)`: the library never imports
    // Foundation (a cache hit maps none of it), so its overloads that take Foundation's URL live here.
    .target(name: "AttachmentKitFoundation", dependencies: ["AttachmentKit"]),
    // A rescue worker of its own, for programs that do not re-execute themselves as workers
    // (RescueWorkers.runIfRequested()): found beside the program's executable.
    .executableTarget(
      name: "attachkit-rescue-worker",
      dependencies: ["AttachmentKit"],
      path: "Sources/RescueWorker"),
    // The push-media proxy behind `attachkit serve`: signed routes over libmicrohttpd, and the
    // signing of its paths (Signing/: the route table, URLSigner) that `attachkit sign` uses.
    .target(
      name: "AttachmentServer",
      dependencies: ["AttachmentKit", "CMicroHTTPD", "PosixLock"]),
    .executableTarget(
      name: "attachkit",
      dependencies: ["AttachmentKit", "AttachmentServer", "ArgumentParsing", "PipelineOptions"]),
    // A small declarative command-line parser (no outside packages can be fetched).
    .target(name: "ArgumentParsing"),
    // The options that configure a pipeline, declared once for attachkit and the extension
    // runner; the library itself never depends on the parser.
    .target(
      name: "PipelineOptions",
      dependencies: ["ArgumentParsing", "AttachmentKit"]),

    // A fault-injecting HTTP/1.1 server on POSIX sockets, shared by tests and benchmarks.
    .target(
      name: "TestSupport",
      dependencies: ["PosixLock"],
      path: "Tests/TestSupport"),
    // Swift Testing traits the test targets share: a thread of its own, the CPU-bound
    // worker, the rescue turn (test targets only: it links Swift Testing). SwiftPM builds every
    // regular target on `swift build`, this one too, so its files are compiled only where the
    // Testing module is (`#if canImport(Testing)`): a release build with the Swift runtime
    // linked statically has none (scripts/build-static.sh builds that way).
    .target(
      name: "TestTraits",
      dependencies: ["TestSupport", "CTestPreload"],
      path: "Tests/TestTraits"),
    // Loads the heavy C libraries into the test process before its first test (test targets
    // only, through TestTraits: see preload.c for why).
    .target(name: "CTestPreload", path: "Tests/CTestPreload"),
    // Serves a directory on loopback for the README's main job.
    .executableTarget(
      name: "SampleServer",
      dependencies: ["TestSupport"],
      path: "Samples/SampleServer"),
    // The benchmarks: cache hit vs cold download against the 30 s budget, and the alternatives.
    .executableTarget(
      name: "AttachKitBench",
      dependencies: ["AttachmentKit", "AttachmentServer", "TestSupport"],
      path: "Benchmarks",
      exclude: ["README.md", "report.png", "record-stores"]),
    // The Notification Service Extension sample: its logic (tested directly) and the command.
    .target(
      name: "ExtensionRunnerCore",
      dependencies: ["AttachmentKit", "CCrypto", "ArgumentParsing", "PipelineOptions", "PosixLock"],
      path: "Samples/ExtensionRunner/Core"),
    .executableTarget(
      name: "ExtensionRunner",
      dependencies: ["ExtensionRunnerCore"],
      path: "Samples/ExtensionRunner/CLI"),
    .testTarget(
      name: "ExtensionRunnerTests",
      dependencies: [
        "ExtensionRunnerCore", "AttachmentKit", "TestSupport", "TestTraits", "CCrypto", "PosixLock",
        "attachkit-rescue-worker",
      ]),
    .testTarget(
      name: "CLITests",
      dependencies: ["TestSupport", "TestTraits"]),
    .testTarget(
      name: "ServeTests",
      dependencies: [
        "AttachmentServer", "AttachmentKit", "TestSupport", "TestTraits", "PosixLock",
        "attachkit-rescue-worker",
      ]),
    .testTarget(
      name: "ArgumentParsingTests",
      dependencies: ["ArgumentParsing"]),
    .testTarget(
      name: "AttachmentKitTests",
      dependencies: ["AttachmentKit", "TestSupport", "TestTraits", "CCurl", "attachkit-rescue-worker"]),
  ],
  swiftLanguageModes: [.v6]
)
