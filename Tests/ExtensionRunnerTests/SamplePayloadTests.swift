import Foundation
import TestSupport
import TestTraits
import Testing

/// Every sample payload through the real `extension-runner` binary against the test server.
@Suite("Sample payloads through the extension-runner binary", .cpuBound)
struct SamplePayloadTests {
  /// One attachment a sample payload should deliver.
  struct ExpectedAttachment: Sendable {
    let identifier: String
    let typeHint: String
    let fileExtension: String
    let media: String
  }

  /// A sample payload and what it should deliver.
  struct Case: Sendable, CustomTestStringConvertible {
    let payload: String
    let attachments: [ExpectedAttachment]
    var testDescription: String { payload }
  }

  static let cases: [Case] = [
    Case(
      payload: "image.json",
      attachments: [
        .init(
          identifier: "attachment-1", typeHint: "public.jpeg", fileExtension: "jpg",
          media: "jpeg-baseline.jpg")
      ]),
    Case(
      payload: "video.json",
      attachments: [
        .init(
          identifier: "attachment-1", typeHint: "public.mpeg-4", fileExtension: "mp4", media: "mp4-isom.mp4")
      ]),
    Case(
      payload: "audio.json",
      attachments: [
        .init(
          identifier: "attachment-1", typeHint: "public.mp3", fileExtension: "mp3",
          media: "mp3-id3v2-cover.mp3")
      ]),
    Case(
      payload: "several.json",
      attachments: [
        .init(
          identifier: "attachment-1", typeHint: "public.png", fileExtension: "png", media: "png-rgba.png"),
        .init(
          identifier: "floor-plan", typeHint: "com.compuserve.gif", fileExtension: "gif",
          media: "gif-animated.gif"),
        .init(
          identifier: "video-tour", typeHint: "public.mpeg-4", fileExtension: "mp4", media: "mp4-mp42.mp4"),
        .init(
          identifier: "agent-note", typeHint: "public.mpeg-4-audio", fileExtension: "m4a",
          media: "aac-m4a.m4a"),
      ]),
    Case(
      payload: "thumbnail.json",
      attachments: [
        .init(
          identifier: "attachment-1", typeHint: "public.jpeg", fileExtension: "jpg",
          media: "jpeg-baseline.jpg"),
        .init(
          identifier: "attachment-2", typeHint: "public.mpeg-4", fileExtension: "mp4", media: "mp4-avc1.mp4"),
        .init(
          identifier: "replay", typeHint: "public.mpeg-4", fileExtension: "mp4", media: "mp4-video-audio.mp4"),
      ]),
  ]

  @Test(
    "delivers the right attachments, with the right type hints, as copies with the canonical extension",
    arguments: cases)
  func attachments(_ sample: Case) async throws {
    // Given the test server serving Samples/media
    let fixture = try RunnerFixture("sample")
    defer { fixture.close() }

    // When the sample payload goes through the binary
    let run = try await fixture.runBinary(fixture.commonArguments + [Repository.payload(sample.payload)])

    // Then content is delivered by the finished extension with every attachment, in payload order
    #expect(run.status == 0, "\(run.standardError)")
    let output = try run.output()
    #expect(output.attachments.map(\.identifier) == sample.attachments.map(\.identifier))
    #expect(output.attachments.map(\.typeHint) == sample.attachments.map(\.typeHint))
    #expect(run.standardError.contains("all steps done"))
    for (delivered, expected) in zip(output.attachments, sample.attachments) {
      // each a file URL named with the canonical extension, holding the sample's exact bytes,
      #expect(delivered.url.hasPrefix("file:///"))
      #expect(delivered.path.hasSuffix("." + expected.fileExtension))
      #expect(fileBytes(delivered.path) == fileBytes(Repository.media(expected.media)))
      // copied out of the cache (iOS moves the file it is given),
      #expect(delivered.path.hasPrefix(fixture.attachmentsDirectory + "/"))
      #expect(!delivered.path.hasPrefix(fixture.cacheDirectory))
      // and fetched exactly once, even when the payload names it twice
      #expect(fixture.server.requestCount(path: "/media/" + expected.media) == 1)
    }
    // The text and the payload are the original's, with {BASE} replaced
    let original = try originalAlert(sample.payload)
    #expect(output.title == original.title)
    #expect(output.body == original.body)
    #expect(!run.standardOutput.contains("{BASE}"))
    #expect(run.standardOutput.contains(fixture.server.baseURL + "/media/"))
  }

  @Test("a second run answers from the cache without contacting the server")
  func cachedRepeat() async throws {
    let fixture = try RunnerFixture("repeat")
    defer { fixture.close() }
    let arguments = fixture.commonArguments + [Repository.payload("image.json")]
    let first = try await fixture.runBinary(arguments)
    let second = try await fixture.runBinary(arguments)
    #expect(first.status == 0 && second.status == 0)
    #expect(fixture.server.requestCount(path: "/media/jpeg-baseline.jpg") == 1)
    #expect(second.standardError.contains("from the cache"))
    let delivered = try #require(try second.output().attachments.first)
    // Each notification gets its own copy.
    #expect(try first.output().attachments.first?.path != delivered.path)
    #expect(fileBytes(delivered.path) == fileBytes(Repository.media("jpeg-baseline.jpg")))
  }

  @Test("without mutable-content the content is delivered unchanged at once and nothing is fetched")
  func noMutableContent() async throws {
    let fixture = try RunnerFixture("immutable")
    defer { fixture.close() }

    let run = try await fixture.runBinary(
      fixture.commonArguments + [Repository.payload("no-mutable-content.json")])

    #expect(run.status == 0)
    let output = try run.output()
    let original = try originalAlert("no-mutable-content.json")
    #expect(output.title == original.title)
    #expect(output.body == original.body)
    #expect(output.categoryIdentifier == "photo")
    #expect(output.attachments.isEmpty)
    #expect(fixture.requestsReceived == 0)
    #expect(!FileManager.default.fileExists(atPath: fixture.cacheDirectory))
    #expect(run.standardError.contains("unchanged"))
    // "At once": not at the 30 s default budget, nor its time-will-expire at 29 s, by the
    // runner's own clock ("done at N ms" from its start: a full parallel run has stretched the
    // process's start and exit, seen from outside, to 16-25 s)
    let done = try #require(BudgetTests.doneAt(run.standardError), "no 'done at' line: \(run.standardError)")
    #expect(done < 5000, "done at \(done) ms")
  }

  @Test("refused media falls back to the content without it")
  func refusedMedia() async throws {
    let fixture = try RunnerFixture("refused")
    defer { fixture.close() }

    let run = try await fixture.runBinary(
      fixture.commonArguments + ["--trace", Repository.payload("refused.json")])

    #expect(run.status == 0)
    let output = try run.output()
    let original = try originalAlert("refused.json")
    #expect(output.title == original.title)
    #expect(output.body == original.body)
    #expect(output.attachments.isEmpty)
    let step = try #require(output.trace?.first { $0.name.hasPrefix("attachment ") })
    #expect(step.outcome == "failed")
    #expect(step.detail.hasPrefix("unsupported_type"))
    #expect(fixture.server.requestCount(path: "/media/html-error-page.html") == 1)
    #expect(run.standardError.contains("all steps done"))
  }

  @Test("the encrypted sample decrypts with the committed key")
  func encryptedSample() async throws {
    let fixture = try RunnerFixture("encrypted")
    defer { fixture.close() }

    let run = try await fixture.runBinary(
      fixture.commonArguments + [
        "--key-file", Repository.payload("sample.key"), Repository.payload("encrypted.json"),
      ])

    #expect(run.status == 0)
    let output = try run.output()
    #expect(output.title == "Your sign-in code")
    #expect(output.subtitle == "Acme Bank")
    #expect(output.body == "428 913 is your code. It expires in 5 minutes.")
    #expect(output.categoryIdentifier == "secure-message")
    #expect(fixture.requestsReceived == 0)
  }

  @Test("the encrypted sample with a wrong key falls back to the original text")
  func encryptedSampleWrongKey() async throws {
    let fixture = try RunnerFixture("wrong-key")
    defer { fixture.close() }
    let wrongKey = try fixture.write("wrong.key", Sealing.hex(Sealing.randomBytes(32)) + "\n")

    let run = try await fixture.runBinary(
      fixture.commonArguments + ["--trace", "--key-file", wrongKey, Repository.payload("encrypted.json")])

    #expect(run.status == 0)
    let output = try run.output()
    #expect(output.title == "New message")
    #expect(output.subtitle == "")
    #expect(output.body == "You have a new message.")
    let step = try #require(output.trace?.first { $0.name == "decrypt" })
    #expect(step.outcome == "failed")
    #expect(step.detail.contains("authentication tag"))
  }

  @Test("loopback media is refused unless private networks are allowed (flag or environment)")
  func privateNetworks() async throws {
    let fixture = try RunnerFixture("private")
    defer { fixture.close() }
    let arguments = [
      "--base-url", fixture.server.baseURL, "--cache-dir", fixture.cacheDirectory,
      "--attachments-dir", fixture.attachmentsDirectory, "--trace", Repository.payload("image.json"),
    ]

    let guarded = try await fixture.runBinary(arguments)
    let allowed = try await fixture.runBinary(
      arguments, environment: ["ATTACHKIT_ALLOW_PRIVATE_NETWORKS": "1"])

    // Guarded: nothing reaches the server, and the text is still delivered
    #expect(guarded.status == 0)
    let blocked = try guarded.output()
    #expect(blocked.title == "Photo from Ana")
    #expect(blocked.attachments.isEmpty)
    #expect(
      blocked.trace?.first { $0.name.hasPrefix("attachment ") }?.detail.hasPrefix("blocked_address") == true)
    // Allowed through the environment variable: fetched once
    #expect(allowed.status == 0)
    #expect(try allowed.output().attachments.map(\.typeHint) == ["public.jpeg"])
    #expect(fixture.server.requestCount(path: "/media/jpeg-baseline.jpg") == 1)
  }

  @Test("a delivery directory others can write to is refused; the text is still delivered")
  func unsafeDeliveryDirectory() async throws {
    let fixture = try RunnerFixture("unsafe")
    defer { fixture.close() }
    try FileManager.default.createDirectory(
      atPath: fixture.attachmentsDirectory, withIntermediateDirectories: true)
    try FileManager.default.setAttributes(
      [.posixPermissions: 0o777], ofItemAtPath: fixture.attachmentsDirectory)

    let run = await fixture.runInProcess(
      fixture.commonArguments + ["--trace", Repository.payload("image.json")])

    #expect(run.status == 0)
    let output = try run.output()
    #expect(output.title == "Photo from Ana")
    #expect(output.attachments.isEmpty)
    #expect(output.trace?.contains { $0.name == "delivery directory" && $0.outcome == "failed" } == true)
  }

  @Test("unusable arguments exit 2 and print nothing on stdout")
  func usageExit() async throws {
    let fixture = try RunnerFixture("usage")
    defer { fixture.close() }
    let missing = try await fixture.runBinary(["--budget", "3"])
    let badBudget = try await fixture.runBinary(["--budget", "soon", Repository.payload("image.json")])
    let badKey = try await fixture.runBinary(
      ["--key-file", fixture.scratch + "/absent.key", Repository.payload("encrypted.json")])
    for run in [missing, badBudget, badKey] {
      #expect(run.status == 2, "\(run.standardError)")
      #expect(run.standardOutput.isEmpty)
      #expect(run.standardError.hasPrefix("extension-runner: "))
    }
  }

  @Test(
    "without --attachments-dir a run stages in a directory of its own and leaves nothing under $TMPDIR; with it the copies stay"
  )
  func stagingLeavesNothing() async throws {
    let fixture = try RunnerFixture("staging")
    defer { fixture.close() }
    let temporary = fixture.scratch + "/tmp"
    try FileManager.default.createDirectory(atPath: temporary, withIntermediateDirectories: true)
    let arguments = [
      "--base-url", fixture.server.baseURL, "--cache-dir", fixture.cacheDirectory, "--allow-private-networks",
      Repository.payload("image.json"),
    ]
    for _ in 0..<2 {
      let run = try await fixture.runBinary(arguments, environment: ["TMPDIR": temporary])
      #expect(run.status == 0, "\(run.standardError)")
      let delivered = try run.output()
      #expect(delivered.attachments.count == 1)
      // The copy was staged under this run's directory of the default root, and is gone.
      let path = try #require(delivered.attachments.first?.path)
      #expect(path.hasPrefix(temporary + "/extension-runner-\(getuid())/run-"), "\(path)")
      #expect(!FileManager.default.fileExists(atPath: path))
    }
    let root = temporary + "/extension-runner-\(getuid())"
    #expect(try FileManager.default.contentsOfDirectory(atPath: root).isEmpty)

    let kept = try await fixture.runBinary(
      arguments + ["--attachments-dir", fixture.attachmentsDirectory], environment: ["TMPDIR": temporary])
    let path = try #require(try kept.output().attachments.first?.path)
    #expect(path.hasPrefix(fixture.attachmentsDirectory + "/"))
    #expect(FileManager.default.fileExists(atPath: path))
  }

  /// The title and body in `aps.alert` of a sample payload.
  func originalAlert(_ payload: String) throws -> (title: String, body: String) {
    let data = fileBytes(Repository.payload(payload))
    let object = try JSONSerialization.jsonObject(with: data) as? [String: Any]
    let alert = (object?["aps"] as? [String: Any])?["alert"] as? [String: Any]
    return (alert?["title"] as? String ?? "", alert?["body"] as? String ?? "")
  }
}
