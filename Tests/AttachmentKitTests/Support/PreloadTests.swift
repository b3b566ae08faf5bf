import TestTraits
import Testing

/// The test process loads the heavy libraries before its first test, so that no test's
/// `dlopen` holds the dynamic loader's lock (which every new thread waits for) mid-run.
@Suite("Test process: heavy libraries loaded up front")
struct PreloadTests {
  @Test("libcurl, libmagic, libvips with its modules and FFmpeg's five libraries are loaded")
  func loaded() {
    #expect(preloadedHeavyLibraries >= 8, "\(preloadedHeavyLibraries) loaded")
  }

  @Test(
    "the test executable's readdir copies records for Foundation only: every other caller (the library's code linked in) reads glibc's own"
  )
  func readdirOnlyForFoundation() {
    #expect(readdirCopiesForFoundation, "libFoundation.so's segments were not found")
    #expect(readdirGivesOwnRecords(in: "/proc/self/fd") == true)
    #expect(readdirGivesOwnRecords(in: "/usr/lib") == true)
  }
}
