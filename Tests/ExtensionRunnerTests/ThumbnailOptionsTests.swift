import AttachmentKit
import ExtensionRunnerCore
import Foundation
import TestSupport
import TestTraits
import Testing

/// Thumbnail options end to end (issue #38, item 2): the payload's `crop`, `time` and `hidden`
/// delivered as iOS's `thumbnailClippingRect`, `thumbnailTime` and `thumbnailHidden`; unusable
/// ones dropped with a reason in the trace; a video given no time gets AttachmentKit's proposed
/// poster time.
@Suite("Runner: thumbnail options", .rescueTurn)
struct ThumbnailOptionsTests {
  static func userInfo(_ text: String) throws -> [String: JSONValue] {
    try NotificationPayload.read(Data(text.utf8)).userInfo
  }

  @Test("each field is read where Airship and the runner's own keys put it")
  func locatedOptions() throws {
    let found = AttachmentLocator().references(
      in: try Self.userInfo(
        """
        {"image-url": "u1", "options": {"crop": {"x": 0.1, "y": 0.2, "width": 0.9, "height": 0.5}},
         "media_attachment": {"url": "u2", "options": {"time": 2, "hidden": true}},
         "fcm_options": {"image": "u3", "options": {"hidden": false}},
         "attachments": [{"url": "u4", "options": {"time": 0.25}}, {"url": "u5"}]}
        """))
    #expect(found.problems.isEmpty, "\(found.problems)")
    #expect(found.references.map(\.url) == ["u1", "u2", "u3", "u4", "u5"])
    let options = found.references.map(\.options)
    #expect(
      options[0]
        == ThumbnailOptions(clippingRect: .init(x: 0.1, y: 0.2, width: 0.9, height: 0.5)))
    #expect(options[1] == ThumbnailOptions(time: 2, hidden: true))
    #expect(options[2] == ThumbnailOptions(hidden: false))
    #expect(options[3] == ThumbnailOptions(time: 0.25))
    #expect(options[4].isEmpty)
  }

  @Test("a top-level options object applies to the first URL string beside it only")
  func optionsBesideOneURL() throws {
    let found = AttachmentLocator().references(
      in: try Self.userInfo(#"{"image-url": "u1", "media_url": "u2", "options": {"hidden": true}}"#))
    #expect(found.references.map(\.options) == [ThumbnailOptions(hidden: true), ThumbnailOptions()])
    #expect(found.problems == ["options applies to the first URL beside it only: none for media_url"])
  }

  struct Invalid: Sendable, CustomTestStringConvertible {
    let options: String
    let reason: String
    var testDescription: String { options }
  }

  static let invalid: [Invalid] = [
    Invalid(
      options: #"{"crop": {"x": 0.5, "y": 0, "width": 0.6, "height": 1}}"#,
      reason: "options.crop reaches past the right edge (x + width = 1.1 > 1): thumbnailClippingRect dropped"),
    Invalid(
      options: #"{"crop": {"x": 0, "y": 0.5, "width": 1, "height": 0.75}}"#,
      reason:
        "options.crop reaches past the bottom edge (y + height = 1.25 > 1): thumbnailClippingRect dropped"),
    Invalid(
      options: #"{"crop": {"x": -0.1, "y": 0, "width": 0.5, "height": 0.5}}"#,
      reason: "options.crop x is -0.1, outside [0, 1]: thumbnailClippingRect dropped"),
    Invalid(
      options: #"{"crop": {"x": 0, "y": 0, "width": 1.5, "height": 1}}"#,
      reason: "options.crop width is 1.5, outside [0, 1]: thumbnailClippingRect dropped"),
    Invalid(
      options: #"{"crop": {"x": 0, "y": 0, "width": 0, "height": 1}}"#,
      reason: "options.crop is empty (width 0.0, height 1.0): thumbnailClippingRect dropped"),
    Invalid(
      options: #"{"crop": {"x": 0, "y": 0, "width": 1}}"#,
      reason: "options.crop has no height: thumbnailClippingRect dropped"),
    Invalid(
      options: #"{"crop": {"x": "0", "y": 0, "width": 1, "height": 1}}"#,
      reason: "options.crop x is a string, not a number: thumbnailClippingRect dropped"),
    Invalid(
      options: #"{"crop": [0, 0, 1, 1]}"#,
      reason: "options.crop is an array, not {x, y, width, height}: thumbnailClippingRect dropped"),
    Invalid(
      options: #"{"time": "3"}"#, reason: "options.time is a string, not a number: thumbnailTime dropped"),
    Invalid(
      options: #"{"time": -1}"#, reason: "options.time is -1.0, not a time ≥ 0 s: thumbnailTime dropped"),
    Invalid(
      options: #"{"hidden": "yes"}"#,
      reason: "options.hidden is a string, not a boolean: thumbnailHidden dropped"),
    Invalid(
      options: #"{"hidden": 1}"#, reason: "options.hidden is a number, not a boolean: thumbnailHidden dropped"
    ),
    Invalid(options: #"[1]"#, reason: "options is an array, not an object: ignored"),
  ]

  @Test(
    "an unusable field is dropped with its reason in the trace; the attachment is delivered",
    arguments: invalid)
  func invalidField(_ case: Invalid) async throws {
    let fixture = try RunnerFixture("thumb-invalid")
    defer { fixture.close() }
    let payload = try fixture.write(
      "p.json",
      """
      {"aps": {"mutable-content": 1}, "image-url": "{BASE}/media/jpeg-baseline.jpg",
       "options": \(`case`.options)}
      """)
    let run = await fixture.runInProcess(fixture.commonArguments + ["--trace", payload])
    #expect(run.status == 0)
    let output = try run.output()
    #expect(output.attachments.map(\.typeHint) == ["public.jpeg"])
    #expect(output.attachments.first?.options == nil, "\(run.standardOutput)")
    let step = try #require(output.trace?.first { $0.name == "payload field" }, "\(run.standardError)")
    #expect(step.outcome == "failed")
    #expect(step.detail == `case`.reason)
  }

  @Test("each field is delivered as the option iOS expects; a time on an image or past the end is dropped")
  func deliveredOptions() async throws {
    let fixture = try RunnerFixture("thumb-delivered")
    defer { fixture.close() }
    // mp4-avc1.mp4 and mp4-video-audio.mp4 are 2 s long.
    let payload = try fixture.write(
      "p.json",
      """
      {"aps": {"mutable-content": 1},
       "image-url": "{BASE}/media/jpeg-baseline.jpg",
       "options": {"crop": {"x": 0.25, "y": 0, "width": 0.5, "height": 1}, "hidden": false, "time": 1},
       "media_attachment": {"url": "{BASE}/media/mp4-avc1.mp4", "options": {"time": 1.5, "hidden": true}},
       "attachments": [{"url": "{BASE}/media/mp4-video-audio.mp4", "id": "late", "options": {"time": 9}}]}
      """)
    // A generous budget for the proposal: a worker's first start on a loaded machine can take seconds.
    let run = await fixture.runInProcess(
      fixture.commonArguments + ["--poster-time-seconds", "20", "--trace", payload])
    #expect(run.status == 0)
    let output = try run.output()
    #expect(output.attachments.map(\.identifier) == ["attachment-1", "attachment-2", "late"])
    typealias Options = RunnerJSON.Attachment.Options
    // The image: its crop and hidden flag; its time dropped (a time is a video's)
    #expect(
      output.attachments[0].options
        == Options(thumbnailClippingRect: .init(x: 0.25, y: 0, width: 0.5, height: 1), thumbnailHidden: false)
    )
    // The video: its time and hidden flag, as given
    #expect(output.attachments[1].options == Options(thumbnailTime: 1.5, thumbnailHidden: true))
    // The video whose time is past its end: dropped, and the proposed time (a bright first frame) given
    #expect(output.attachments[2].options == Options(thumbnailTime: 0))
    let dropped = (output.trace ?? []).filter { $0.name.hasPrefix("attachment options") }
    #expect(
      dropped.map(\.detail).sorted() == [
        "time 1 s on an image (public.jpeg), not a video: thumbnailTime dropped",
        "time 9 s is past the video's duration of 2 s: thumbnailTime dropped",
      ])
    #expect(dropped.allSatisfy { $0.outcome == "failed" })
    #expect(run.standardError.contains("options: thumbnailTime 0 s (proposed)"), "\(run.standardError)")
    // The JSON keys, as written
    #expect(run.standardOutput.contains("\"thumbnailClippingRect\""))
    #expect(run.standardOutput.contains("\"thumbnailHidden\": true"))
  }

  @Test("a video given no time gets the proposed one: a black first second skipped")
  func proposedTime() async throws {
    let fixture = try RunnerFixture("thumb-proposed")
    defer { fixture.close() }
    // A real video, made here: 1 s of black, then 3 s of a test pattern.
    let video = fixture.scratch + "/black-first.mp4"
    try await Self.ffmpeg([
      "-f", "lavfi", "-i", "color=black:s=320x240:r=25:d=1", "-f", "lavfi", "-i",
      "testsrc=s=320x240:r=25:d=3",
      "-filter_complex", "[0:v][1:v]concat=n=2:v=1:a=0[v]", "-map", "[v]", "-c:v", "libx264", "-preset",
      "ultrafast", "-pix_fmt", "yuv420p", "-movflags", "+faststart", video,
    ])
    fixture.server.serveFile("/black-first", file: video, contentType: "video/mp4")
    let payload = try fixture.write(
      "p.json",
      """
      {"aps": {"mutable-content": 1}, "media_attachment": {"url": "{BASE}/black-first"},
       "attachments": [{"url": "{BASE}/black-first?given", "options": {"time": 3}}]}
      """)
    // A generous budget: a worker's first start on a loaded machine can take seconds.
    let run = await fixture.runInProcess(
      fixture.commonArguments + ["--poster-time-seconds", "20", "--trace", payload])
    #expect(run.status == 0)
    let output = try run.output()
    #expect(output.attachments.count == 2, "\(run.standardError)")
    let proposed = try #require(output.attachments.first?.options?.thumbnailTime, "\(run.standardOutput)")
    #expect(proposed >= 1.0 && proposed < 1.5, "proposed \(proposed) s")
    #expect(output.attachments.last?.options?.thumbnailTime == 3)  // a given time is kept
    #expect(run.standardError.contains("(proposed)"))

    // Again, from the cache: the same proposal, carried by the record, with no search at all
    let again = await fixture.runInProcess(fixture.commonArguments + ["--poster-time-seconds", "0", payload])
    #expect(try again.output().attachments.first?.options?.thumbnailTime == proposed)
    #expect(fixture.server.requestCount(path: "/black-first") == 2)  // one each URL, once

    // With the search off, a new video gets no proposal: iOS takes its first frame
    let off = try fixture.write(
      "off.json", #"{"aps": {"mutable-content": 1}, "media_url": "{BASE}/black-first?off"}"#)
    let plain = await fixture.runInProcess(fixture.commonArguments + ["--poster-time-seconds", "0", off])
    #expect(try plain.output().attachments.map(\.typeHint) == ["public.mpeg-4"])
    #expect(try plain.output().attachments.first?.options == nil)
  }

  /// Runs the `ffmpeg` command; fails the test when it fails.
  static func ffmpeg(_ arguments: [String]) async throws {
    let status = try await onOwnThread { () throws -> Int32 in
      let process = Process()
      process.executableURL = URL(fileURLWithPath: "/usr/bin/ffmpeg")
      process.arguments = ["-nostdin", "-loglevel", "error", "-y"] + arguments
      process.standardInput = FileHandle.nullDevice
      try process.runClosingChildEnds()
      process.blockUntilExit()
      process.closeStandardPipes()
      return process.terminationStatus
    }
    try #require(status == 0, "ffmpeg exited \(status)")
  }
}
