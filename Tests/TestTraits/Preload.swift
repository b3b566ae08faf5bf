import CTestPreload

/// How many of the heavy C libraries (libcurl, libmagic, libvips and its modules, FFmpeg's)
/// the test process loaded before its first test: see `Tests/CTestPreload/preload.c`.
public var preloadedHeavyLibraries: Int { Int(ak_test_preloaded_libraries()) }
