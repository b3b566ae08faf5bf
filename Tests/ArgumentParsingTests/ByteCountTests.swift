import ArgumentParsing
import Testing

/// ``ByteCount/parse(_:)``: sizes with decimal and binary units.
@Suite("Byte counts")
struct ByteCountTests {
  @Test(
    "reads plain numbers and every unit, in any case",
    arguments: [
      ("0", 0), ("500", 500), ("500B", 500), ("500 b", 500),
      ("10K", 10_000), ("10kb", 10_000), ("10KB", 10_000), ("500k", 500_000),
      ("3M", 3_000_000), ("3MB", 3_000_000), ("2G", 2_000_000_000), ("2GB", 2_000_000_000),
      ("1T", 1_000_000_000_000), ("1TB", 1_000_000_000_000),
      ("1Ki", 1024), ("1KiB", 1024), ("5MiB", 5_242_880), ("5mib", 5_242_880), ("5 MiB", 5_242_880),
      ("2GiB", 2_147_483_648), ("1TiB", 1_099_511_627_776),
      ("1.5MiB", 1_572_864), ("0.5K", 500), ("2.", 2), (".5KB", 500),
    ] as [(String, Int64)])
  func valid(text: String, bytes: Int64) {
    // Given a size as typed
    // When it is parsed
    // Then it is that many bytes
    #expect(ByteCount.parse(text) == bytes)
  }

  @Test(
    "rejects what is not a whole number of bytes",
    arguments: [
      "", "MB", "-5", "+5", "10XB", "10 M B", "1.2.3", ".", "0.3B", "1.0001K", "5e3",
      "99999999999999999999", "9000000TiB", " 5",
    ])
  func invalid(text: String) {
    // Given a malformed, fractional or overflowing size
    // When it is parsed
    // Then there is no result
    #expect(ByteCount.parse(text) == nil)
  }
}
