import TestTraits
import Testing

@testable import AttachmentKit

/// The HTTP rules of a response as a value: no socket, no libcurl.
@Suite("Response state machine", .cpuBound)
struct ResponseStateMachineTests {
  private static func rules(
    body: Int64 = 1000, headers: Int = 64 * 1024, conditional: Bool = false, checkHosts: Bool = false
  ) -> ResponseStateMachine.Rules {
    .init(
      maximumBodyBytes: body, maximumHeaderBytes: headers, isConditional: conditional,
      checksRedirectHosts: checkHosts)
  }

  /// Feeds `lines` (without line breaks) and returns the last action.
  @discardableResult
  private static func feed(_ machine: inout ResponseStateMachine, _ lines: [String])
    -> ResponseStateMachine.HeaderAction
  {
    var last = ResponseStateMachine.HeaderAction.proceed
    for text in lines {
      let bytes = Array((text + "\r\n").utf8)
      last = bytes.withUnsafeBytes { machine.receive(HeaderLine($0), byteCount: $0.count) }
      if case .fail = last { return last }
    }
    return last
  }

  private static func error(_ action: ResponseStateMachine.HeaderAction) -> AttachmentError? {
    if case .fail(let error) = action { return error }
    return nil
  }

  private static func head(_ action: ResponseStateMachine.HeaderAction) -> ResponseHead? {
    if case .finalHead(let head) = action { return head }
    return nil
  }

  @Test("a 200 within its limits is final, and a body of the declared length completes it")
  func success() {
    var machine = ResponseStateMachine(rules: Self.rules())
    let action = Self.feed(
      &machine, ["HTTP/1.1 200 OK", "Content-Length: 10", "Content-Type: image/png", ""])
    #expect(Self.head(action)?.status == 200)
    #expect(machine.receiveBody(count: 4) == nil)
    #expect(machine.receiveBody(count: 6) == nil)
    #expect((try? machine.completed().get())?.headers.contentType == "image/png")
  }

  @Test("1xx and redirects with a Location are not final; a redirect without one is")
  func interimResponses() {
    var machine = ResponseStateMachine(rules: Self.rules())
    #expect(Self.head(Self.feed(&machine, ["HTTP/1.1 100 Continue", ""])) == nil)
    #expect(Self.head(Self.feed(&machine, ["HTTP/1.1 302 Found", "Location: /next", ""])) == nil)
    #expect(machine.finalHead == nil)
    let final = Self.feed(&machine, ["HTTP/1.1 200 OK", ""])
    #expect(
      Self.head(final)?.headers.location == nil, "headers of an earlier response leak into the final one")

    var noLocation = ResponseStateMachine(rules: Self.rules())
    #expect(Self.error(Self.feed(&noLocation, ["HTTP/1.1 302 Found", ""]))?.code == .httpStatus)
  }

  @Test("a non-2xx status fails with its code and Content-Type, before any length rule")
  func statusFirst() {
    var machine = ResponseStateMachine(rules: Self.rules(body: 10))
    let error = Self.error(
      Self.feed(&machine, ["HTTP/1.1 404 Not Found", "Content-Type: text/html", "Content-Length: 99999", ""]))
    #expect(error?.code == .httpStatus)
    #expect(error?.httpStatus == 404)
    #expect(error?.detected == "text/html")
  }

  @Test("304 is an answer only to a conditional request, and has no body")
  func notModified() {
    var unconditional = ResponseStateMachine(rules: Self.rules())
    #expect(Self.error(Self.feed(&unconditional, ["HTTP/1.1 304 Not Modified", ""]))?.code == .httpStatus)
    var conditional = ResponseStateMachine(rules: Self.rules(conditional: true))
    #expect(
      Self.head(Self.feed(&conditional, ["HTTP/1.1 304 Not Modified", "ETag: \"a\"", ""]))?.status == 304)
    #expect((try? conditional.completed().get())?.headers.etag == "\"a\"")
  }

  @Test(
    "a declared length at the limit passes, one byte over fails; the body fails at the byte that crosses it")
  func bodyLimits() {
    var atLimit = ResponseStateMachine(rules: Self.rules(body: 1000))
    #expect(Self.head(Self.feed(&atLimit, ["HTTP/1.1 200 OK", "Content-Length: 1000", ""])) != nil)
    var over = ResponseStateMachine(rules: Self.rules(body: 1000))
    #expect(Self.error(Self.feed(&over, ["HTTP/1.1 200 OK", "Content-Length: 1001", ""]))?.code == .tooLarge)

    var streaming = ResponseStateMachine(rules: Self.rules(body: 1000))
    Self.feed(&streaming, ["HTTP/1.1 200 OK", ""])
    #expect(streaming.receiveBody(count: 999) == nil)
    #expect(streaming.receiveBody(count: 1) == nil)
    #expect(streaming.receiveBody(count: 1)?.code == .tooLarge)
  }

  @Test("headers exactly at the cap pass, one byte more fails (64 KiB by default)")
  func headerCap() {
    let cap = DownloaderConfiguration().maximumHeaderBytes
    #expect(cap == 64 * 1024)
    let status = "HTTP/1.1 200 OK"
    // status line + CRLF, one filler field + CRLF, and the final CRLF make exactly `cap` bytes
    let fillerLength = cap - (status.utf8.count + 2) - 2 - 2 - "X-Filler: ".utf8.count
    let filler = "X-Filler: " + String(repeating: "a", count: fillerLength)
    var atCap = ResponseStateMachine(rules: Self.rules(headers: cap))
    #expect(Self.head(Self.feed(&atCap, [status, filler, ""])) != nil)
    var overCap = ResponseStateMachine(rules: Self.rules(headers: cap))
    #expect(Self.error(Self.feed(&overCap, [status, filler + "a", ""]))?.code == .headersTooLarge)
  }

  @Test("completion: no head, an empty body, and a body shorter or longer than declared each fail")
  func completion() {
    #expect(ResponseStateMachine(rules: Self.rules()).completed().failure?.code == .networkError)
    var empty = ResponseStateMachine(rules: Self.rules())
    Self.feed(&empty, ["HTTP/1.1 200 OK", ""])
    #expect(empty.completed().failure?.code == .empty)
    var short = ResponseStateMachine(rules: Self.rules())
    Self.feed(&short, ["HTTP/1.1 200 OK", "Content-Length: 10", ""])
    _ = short.receiveBody(count: 9)
    #expect(short.completed().failure?.code == .truncated)
    var long = ResponseStateMachine(rules: Self.rules())
    Self.feed(&long, ["HTTP/1.1 200 OK", "Content-Length: 10", ""])
    _ = long.receiveBody(count: 11)
    #expect(long.completed().failure?.code == .truncated)
  }

  @Test("through a proxy, a redirect to a private literal fails; a relative one proceeds")
  func redirectHosts() {
    var machine = ResponseStateMachine(rules: Self.rules(checkHosts: true))
    #expect(Self.head(Self.feed(&machine, ["HTTP/1.1 301 Moved", "Location: /elsewhere", ""])) == nil)
    let blocked = Self.feed(&machine, ["HTTP/1.1 302 Found", "Location: http://[fd00::1]:8080/x", ""])
    #expect(Self.error(blocked)?.code == .blockedAddress)
    var direct = ResponseStateMachine(rules: Self.rules(checkHosts: false))
    #expect(Self.error(Self.feed(&direct, ["HTTP/1.1 302 Found", "Location: http://10.0.0.1/", ""])) == nil)
  }
}

extension Result {
  fileprivate var failure: Failure? {
    if case .failure(let error) = self { return error }
    return nil
  }
}

/// Resumed attempts: a `206` continues the body, a `200` starts it over.
@Suite("Response state machine: resumed attempts", .cpuBound)
struct ResponseStateMachineResumeTests {
  private static func feed(_ machine: inout ResponseStateMachine, _ lines: [String])
    -> ResponseStateMachine.HeaderAction
  {
    var last = ResponseStateMachine.HeaderAction.proceed
    for text in lines {
      let bytes = Array((text + "\r\n").utf8)
      last = bytes.withUnsafeBytes { machine.receive(HeaderLine($0), byteCount: $0.count) }
    }
    return last
  }

  /// A machine that received 600 of a 1000-byte body with a strong ETag.
  private static func cutAt600() -> ResponseStateMachine {
    var machine = ResponseStateMachine(
      rules: .init(
        maximumBodyBytes: 5000, maximumHeaderBytes: 64 * 1024, isConditional: false,
        checksRedirectHosts: false))
    _ = feed(
      &machine, ["HTTP/1.1 200 OK", "Content-Length: 1000", "ETag: \"v1\"", "Accept-Ranges: bytes", ""])
    _ = machine.receiveBody(count: 600)
    return machine
  }

  @Test("a 206 from the offset asked for continues the body; completion answers with the first head")
  func resumed() throws {
    var machine = Self.cutAt600()
    machine.beginAttempt(resumingAt: 600)
    let action = Self.feed(
      &machine,
      ["HTTP/1.1 206 Partial Content", "Content-Length: 400", "Content-Range: bytes 600-999/1000", ""])
    guard case .resumed(let head) = action else {
      Issue.record("expected .resumed, got \(action)")
      return
    }
    #expect(head.status == 200)
    #expect(!machine.bodyRestarts)
    _ = machine.receiveBody(count: 400)
    #expect(machine.bodyBytes == 1000)
    #expect(machine.resumedBytes == 600)
    #expect(try machine.completed().get().status == 200)
  }

  @Test("a 206 from another offset fails; a short resumed body is truncated")
  func wrongRange() {
    var machine = Self.cutAt600()
    machine.beginAttempt(resumingAt: 600)
    let action = Self.feed(
      &machine,
      ["HTTP/1.1 206 Partial Content", "Content-Length: 500", "Content-Range: bytes 500-999/1000", ""])
    guard case .fail(let error) = action else {
      Issue.record("expected .fail, got \(action)")
      return
    }
    #expect(error.code == .networkError)

    var short = Self.cutAt600()
    short.beginAttempt(resumingAt: 600)
    _ = Self.feed(
      &short,
      ["HTTP/1.1 206 Partial Content", "Content-Length: 400", "Content-Range: bytes 600-999/1000", ""])
    _ = short.receiveBody(count: 100)
    #expect(short.completed().failure?.code == .truncated)
  }

  @Test("a 200 to the ranged attempt starts the body over")
  func restarted() throws {
    var machine = Self.cutAt600()
    machine.beginAttempt(resumingAt: 600)
    let action = Self.feed(&machine, ["HTTP/1.1 200 OK", "Content-Length: 1000", ""])
    guard case .finalHead = action else {
      Issue.record("expected .finalHead, got \(action)")
      return
    }
    #expect(machine.bodyRestarts)
    #expect(machine.bodyBytes == 0)
    _ = machine.receiveBody(count: 1000)
    #expect(machine.resumedBytes == 0)
    #expect(try machine.completed().get().status == 200)
  }

  @Test(
    "Content-Range values",
    arguments: [
      ("bytes 0-9/10", true), ("bytes 5-9/*", true), ("bytes 9-5/10", false), ("bytes 0-10/10", false),
      ("items 0-9/10", false), ("bytes 0-9", false),
    ])
  func contentRange(text: String, valid: Bool) {
    #expect((ContentRange(text) != nil) == valid)
  }
}
