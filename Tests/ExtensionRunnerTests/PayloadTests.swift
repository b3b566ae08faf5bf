import Foundation
import TestTraits
import Testing

@testable import ExtensionRunnerCore

/// Reading payloads without trusting them, finding attachments, and reading the command line.
@Suite("Payloads, attachment keys and arguments", .threadOfItsOwn)
struct PayloadTests {
  /// Parses JSON text that the test knows is an object.
  func payload(_ text: String) throws -> NotificationPayload {
    try NotificationPayload.read(Data(text.utf8))
  }

  @Test("the alert as an object, as a string, and mutable-content as iOS reads it")
  func alertForms() throws {
    let full = try payload(
      """
      {"aps": {"alert": {"title": "t", "subtitle": "s", "body": "b"},
               "category": "c", "mutable-content": 1}}
      """)
    #expect(
      (full.title, full.subtitle, full.body, full.category, full.isMutable) == ("t", "s", "b", "c", true))
    #expect(full.problems.isEmpty)
    let plain = try payload(#"{"aps": {"alert": "just a body", "mutable-content": 0}}"#)
    #expect((plain.title, plain.body, plain.isMutable) == ("", "just a body", false))
    #expect(try payload(#"{"aps": {}}"#).isMutable == false)
    #expect(try payload(#"{}"#).isMutable == false)
  }

  @Test("fields of the wrong type are ignored and noted, never trusted")
  func wrongTypes() throws {
    let odd = try payload(
      #"{"aps": {"alert": {"title": 7, "body": ["x"]}, "category": null, "mutable-content": "1"}}"#)
    #expect((odd.title, odd.body, odd.category, odd.isMutable) == ("", "", "", false))
    #expect(odd.problems.count == 4)
    #expect(try payload(#"{"aps": "nope"}"#).problems == ["aps is a string, not an object: ignored"])
    #expect(try payload(#"{"aps": {"alert": 3}}"#).problems.count == 1)
  }

  @Test("what is not a JSON object is not a payload")
  func notAPayload() {
    #expect(throws: NotificationPayload.ReadError.notJSON) { try NotificationPayload.read(Data("{".utf8)) }
    #expect(throws: NotificationPayload.ReadError.notAnObject("an array")) {
      try NotificationPayload.read(Data("[]".utf8))
    }
  }

  @Test("{BASE} is replaced in every string; a leftover one is noted")
  func basePlaceholder() throws {
    let text = #"{"a": "{BASE}/x", "b": [{"url": "{BASE}/y"}]}"#
    let replaced = try NotificationPayload.read(Data(text.utf8), baseURL: "http://h:1")
    #expect(replaced.userInfo["a"] == .string("http://h:1/x"))
    #expect(replaced.userInfo["b"] == .array([.object(["url": .string("http://h:1/y")])]))
    #expect(replaced.problems.isEmpty)
    #expect(try NotificationPayload.read(Data(text.utf8)).problems.count == 1)
  }

  @Test("attachment URLs under the usual keys, in key order, each URL once, identifiers unique")
  func locator() throws {
    let found = try AttachmentLocator().references(
      in: payload(
        """
        {"attachments": [{"url": "u4", "id": "a"}, {"url": "u1"}, "u5", {"url": "u6", "id": "a"},
                         42, {"id": "x"}],
         "fcm_options": {"image": "u3"}, "media_url": "u2", "image-url": "u1", "attachment-url": " "}
        """
      ).userInfo)
    #expect(found.references.map(\.url) == ["u1", "u2", "u3", "u4", "u5", "u6"])
    #expect(
      found.references.map(\.identifier) == [
        "attachment-1", "attachment-2", "attachment-3", "a", "attachment-5", "a-2",
      ])
    #expect(found.references[2].origin == "fcm_options.image")
    #expect(found.references[3].origin == "attachments[0].url")
    #expect(found.duplicates == ["attachments[1].url repeats an earlier URL: fetched once"])
    #expect(found.problems.count == 3)  // the blank string, the number, the object without url
  }

  @Test("the key list is configurable, nested paths included")
  func customKeys() throws {
    let userInfo = try payload(#"{"data": {"media": {"url": "m", "id": 7}}, "image-url": "i"}"#).userInfo
    let found = AttachmentLocator(keys: ["data.media"]).references(in: userInfo)
    #expect(found.references == [AttachmentReference(identifier: "7", url: "m", origin: "data.media.url")])
    #expect(AttachmentLocator(keys: ["data.missing", "nothing"]).references(in: userInfo).references.isEmpty)
  }

  @Test("--attachment-keys reaches the run")
  func customKeysInARun() async throws {
    let fixture = try RunnerFixture("keys")
    defer { fixture.close() }
    let payload = try fixture.write(
      "p.json",
      """
      {"aps": {"mutable-content": 1}, "data": {"pic": "{BASE}/media/gif-static.gif"},
       "image-url": "{BASE}/x"}
      """
    )
    let run = await fixture.runInProcess(
      fixture.commonArguments + ["--attachment-keys", "data.pic", payload])
    #expect(run.status == 0)
    #expect(try run.output().attachments.map(\.typeHint) == ["com.compuserve.gif"])
    #expect(fixture.server.requestCount(path: "/x") == 0)
  }

  @Test("the JSON output keeps userInfo and carries the trace only with --trace")
  func outputShape() async throws {
    let fixture = try RunnerFixture("shape")
    defer { fixture.close() }
    let payload = try fixture.write(
      "p.json", #"{"aps": {"alert": "hi"}, "n": 1, "f": 1.5, "t": true, "z": null, "l": [1, "a"]}"#)
    let plain = await fixture.runInProcess([payload])
    let traced = await fixture.runInProcess(["--trace", payload])
    #expect(try plain.output().trace == nil)
    #expect(try traced.output().trace?.isEmpty == false)
    let userInfo = try plain.userInfo()
    #expect(userInfo["n"] as? Int == 1)
    #expect(userInfo["f"] as? Double == 1.5)
    #expect(userInfo["l"] as? [Any] != nil)
    #expect(plain.standardOutput.contains(#""t": true"#))  // a JSON true, not the number 1
    #expect(userInfo["z"] is NSNull)
    #expect(try plain.output().body == "hi")
  }

  @Test("unusable arguments exit 2", arguments: UsageCase.allCases)
  func usage(_ usage: UsageCase) async throws {
    let fixture = try RunnerFixture("usage")
    defer { fixture.close() }
    let image = Repository.payload("image.json")
    let arguments: [String]
    switch usage {
    case .noPayload: arguments = []
    case .twoPayloads: arguments = [image, image]
    case .unknownOption: arguments = ["--budgte", "3", image]
    case .zeroBudget: arguments = ["--budget", "0", image]
    case .hugeBudget: arguments = ["--budget", "1e300", image]
    case .negativeMargin: arguments = ["--expire-margin=-1", image]
    case .marginOverBudget: arguments = ["--budget", "2", "--expire-margin", "2", image]
    case .badBaseURL: arguments = ["--base-url", "ftp://x", image]
    case .emptyKeys: arguments = ["--attachment-keys", "a,,b", image]
    case .missingPayload: arguments = [fixture.scratch + "/absent.json"]
    case .payloadNotJSON: arguments = [try fixture.write("p.json", "aps: 1")]
    case .payloadNotObject: arguments = [try fixture.write("p.json", "[]")]
    case .payloadTooLarge: arguments = ["/dev/zero"]
    case .payloadIsADirectory: arguments = [fixture.scratch]
    case .keyFileMissing: arguments = ["--key-file", fixture.scratch + "/absent", image]
    case .keyFileNotAKey: arguments = ["--key-file", try fixture.write("k", "too short"), image]
    case .localeWithoutStrings: arguments = ["--locale", "fr", image]
    case .badLocale: arguments = ["--strings", "x.strings", "--locale", "fr\u{1B}[31m", image]
    case .zeroConcurrency: arguments = ["--max-concurrent-fetches", "0", image]
    case .tooManyAttachments: arguments = ["--max-attachments", "1001", image]
    case .notANumber: arguments = ["--max-attachments", "ten", image]
    case .negativePosterTime: arguments = ["--poster-time-seconds=-1", image]
    case .hugePosterTime: arguments = ["--poster-time-seconds", "1e300", image]
    }
    let run = await fixture.runInProcess(arguments)
    #expect(run.status == 2)
    #expect(run.standardOutput.isEmpty)
    #expect(run.standardError.hasPrefix("extension-runner: "))
    #expect(fixture.requestsReceived == 0)
  }

  /// Command lines that must be refused.
  enum UsageCase: String, CaseIterable, Sendable {
    case noPayload, twoPayloads, unknownOption, zeroBudget, hugeBudget, negativeMargin, marginOverBudget
    case badBaseURL, emptyKeys, missingPayload, payloadNotJSON, payloadNotObject, payloadTooLarge
    case payloadIsADirectory, keyFileMissing, keyFileNotAKey
    case localeWithoutStrings, badLocale, zeroConcurrency, tooManyAttachments, notANumber
    case negativePosterTime, hugePosterTime
  }

  @Test("--strings, --locale and the caps reach the options; the caps default to 4 and 10")
  func localizationAndCapOptions() throws {
    guard case .run(let defaults) = try RunnerOptions.parse(["p.json"]) else {
      Issue.record("not a run")
      return
    }
    #expect(defaults.localization == nil)
    #expect((defaults.maximumConcurrentFetches, defaults.maximumAttachments) == (4, 10))
    let words = [
      "--strings", "L.xcstrings", "--locale", "pt-BR", "--max-concurrent-fetches", "2", "--max-attachments",
      "30",
      "p.json",
    ]
    guard case .run(let options) = try RunnerOptions.parse(words) else {
      Issue.record("not a run")
      return
    }
    #expect(options.localization == LocalizationSource(path: "L.xcstrings", locale: "pt-BR"))
    #expect((options.maximumConcurrentFetches, options.maximumAttachments) == (2, 30))
    guard case .run(let english) = try RunnerOptions.parse(["--strings", "L.strings", "p.json"]) else {
      return
    }
    #expect(english.localization?.locale == "en")
  }

  @Test("private networks: off by default, on with the flag or ATTACHKIT_ALLOW_PRIVATE_NETWORKS")
  func privateNetworkOption() throws {
    func allowed(_ words: [String], _ environment: [String: String]) throws -> Bool {
      guard case .run(let options) = try RunnerOptions.parse(words + ["p.json"], environment: environment)
      else { return false }
      return options.allowPrivateNetworks
    }
    #expect(try allowed([], [:]) == false)
    #expect(try allowed(["--allow-private-networks"], [:]))
    #expect(try allowed([], ["ATTACHKIT_ALLOW_PRIVATE_NETWORKS": "1"]))
    #expect(try allowed([], ["ATTACHKIT_ALLOW_PRIVATE_NETWORKS": "yes"]))
    #expect(try allowed([], ["ATTACHKIT_ALLOW_PRIVATE_NETWORKS": "0"]) == false)
  }

  @Test("the budget counts from the process start read from /proc/PID/stat")
  func processStart() async throws {
    // The stat line: field 22 after the command name, which may hold spaces and parentheses.
    let line = "4242 (odd) name (x)) S 1 4242 4242 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 987654 123 45"
    #expect(ProcessStart.startTime(fromStat: line) == 987_654)
    #expect(ProcessStart.startTime(fromStat: "12 (short) S 1 2") == nil)

    // A plausible age moves the start back by exactly that much; an implausible one is ignored.
    let now = ContinuousClock.now
    #expect(ProcessStart.instant(now: now, age: .milliseconds(250)) == now - .milliseconds(250))
    #expect(ProcessStart.instant(now: now, age: .zero) == now)
    #expect(ProcessStart.instant(now: now, age: .seconds(1)) == now)
    #expect(ProcessStart.instant(now: now, age: .milliseconds(-5)) == now)
    #expect(ProcessStart.instant(now: now, age: nil) == now)

    // The age read from /proc matches a real child's age as this process measures it: between
    // the time since run() returned and the time since it was called, give or take two clock
    // ticks (20 ms). A reader that returned zero, or the test process's own age, would fail.
    let child = Process()
    child.executableURL = URL(fileURLWithPath: "/bin/sleep")
    child.arguments = ["30"]
    let beforeRun = ContinuousClock.now
    try child.runClosingChildEnds()
    let afterRun = ContinuousClock.now
    defer { child.terminate() }
    try? await Task.sleep(for: .milliseconds(300))
    // The bounds bracket the read itself: the youngest the child can be is taken before it,
    // the oldest after it (taken both after, a loaded machine's pause between the read and the
    // clock made the child look 35 ms too young).
    let beforeRead = ContinuousClock.now
    let age = try #require(ProcessStart.age(pid: String(child.processIdentifier)))
    let (oldest, youngest) = (ContinuousClock.now - beforeRun, beforeRead - afterRun)
    #expect(age >= youngest - .milliseconds(20), "age \(age), at least \(youngest)")
    #expect(age <= oldest + .milliseconds(20), "age \(age), at most \(oldest)")
    #expect(ProcessStart.age(pid: "no-such-process") == nil)
  }

  @Test("--help prints the help and exits 0")
  func help() async throws {
    let fixture = try RunnerFixture("help")
    defer { fixture.close() }
    let run = await fixture.runInProcess(["--help"])
    #expect(run.status == 0)
    #expect(run.standardOutput.contains("--expire-margin SECONDS"))
  }
}
