import CTestPreload
import Glibc

/// How many of the heavy C libraries (libcurl, libmagic, libvips and its modules, FFmpeg's)
/// the test process loaded before its first test: see `Tests/CTestPreload/preload.c`.
public var preloadedHeavyLibraries: Int { Int(ak_test_preloaded_libraries()) }

/// Whether `readdir` gives the caller glibc's own records for `directory` when called from
/// outside Foundation (this Swift code, linked into the test executable as the library's is):
/// the padded copy of `Tests/CTestPreload/readdir_copy.c` is for Foundation's calls only.
/// `nil` when the directory cannot be read or is empty.
public func readdirGivesOwnRecords(in directory: String) -> Bool? {
  guard let stream = opendir(directory) else { return nil }
  defer { closedir(stream) }
  var entries = 0
  while let entry = readdir(stream) {
    if ak_test_readdir_is_copy(entry) != 0 { return false }
    entries += 1
  }
  return entries > 0 ? true : nil
}

/// Whether the `readdir` of the test executable found libFoundation.so, the one caller whose
/// records it copies (see `Tests/CTestPreload/readdir_copy.c`).
public var readdirCopiesForFoundation: Bool { ak_test_readdir_copies_foundation() != 0 }
