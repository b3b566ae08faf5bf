import Foundation
import TestTraits
import Testing

/// Issue 18's JSON contract: `codecs` on accepted files, `unsupported_codec` with `detected`
/// naming the codec on refused ones.
@Suite("attachkit validate: codecs in the JSON result", .threadOfItsOwn)
struct CodecJSONTests {
  @Test("accepted files list their codecs; a refused codec is a rejection naming it")
  func codecs() async throws {
    let files = ["mp4-h264-dts.mp4", "m4a-dts.mp4", "jpeg-baseline.jpg"].map { Media.directory + "/" + $0 }
    let result = try await CLI.run(["validate", "--json"] + files)
    #expect(result.status == 1)
    let lines = result.jsonLines
    try #require(lines.count == 3)
    #expect(lines[0]["codecs"] as? [String] == ["avc1.64000A", "dtsc"])
    #expect((lines[0]["warnings"] as? [String])?.contains { $0.contains("DTS audio") } == true)
    #expect(lines[1]["outcome"] as? String == "rejected")
    let error = lines[1]["error"] as? [String: Any]
    #expect(error?["code"] as? String == "unsupported_codec")
    #expect(error?["detected"] as? String == "audio/mp4; codecs=\"dtsc\"")
    #expect(error?["message"] as? String == "The audio is DTS audio, which iOS does not decode.")
    #expect(lines[2]["codecs"] as? [String] == [])
  }
}
