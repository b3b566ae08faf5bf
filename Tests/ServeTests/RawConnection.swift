import Foundation
import TestSupport

/// A raw TCP connection to loopback, for clients that misbehave on purpose (slowloris, huge
/// headers, idle connections holding a slot). Its reads block, so they run on a thread of
/// their own.
final class RawConnection: Sendable {
  private let fd: Int32

  init?(port: Int) {
    guard let fd = Loopback.connect(port: port) else { return nil }
    self.fd = fd
  }

  deinit { close(fd) }

  @discardableResult
  func send(_ text: String) -> Bool {
    let bytes = Array(text.utf8)
    return bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
      == bytes.count
  }

  /// The socket, for `poll`.
  var descriptor: Int32 { fd }

  /// Reads what has arrived without waiting; whether the peer has closed (or reset) the
  /// connection.
  func readAvailable() -> (bytes: [UInt8], closed: Bool) {
    var out: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 65536)
    while true {
      let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
      if count > 0 {
        out += buffer[0..<count]
        continue
      }
      return (out, count == 0 || (errno != EAGAIN && errno != EWOULDBLOCK))
    }
  }

  /// Reads until the peer closes or `seconds` pass with nothing to read; returns what came and
  /// whether the peer closed.
  func readUntilClosed(idleSeconds seconds: Double) async -> (text: String, closed: Bool) {
    await onOwnThread { [self] in blockingReadUntilClosed(idleSeconds: seconds) }
  }

  private func blockingReadUntilClosed(idleSeconds seconds: Double) -> (text: String, closed: Bool) {
    var out: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 65536)
    while true {
      var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
      guard poll(&poller, 1, Int32(seconds * 1000)) == 1 else {
        return (String(decoding: out, as: UTF8.self), false)
      }
      let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
      if count <= 0 { return (String(decoding: out, as: UTF8.self), true) }
      out += buffer[0..<count]
    }
  }

  /// Reads one response head and body of `Content-Length` bytes (keep-alive use).
  func readResponse() async -> String {
    await onOwnThread { [self] in blockingReadResponse() }
  }

  private func blockingReadResponse() -> String {
    var out: [UInt8] = []
    var byte: UInt8 = 0
    while !out.suffix(4).elementsEqual(Array("\r\n\r\n".utf8)) {
      guard recv(fd, &byte, 1, 0) == 1 else { break }
      out.append(byte)
    }
    let head = String(decoding: out, as: UTF8.self)
    let length =
      head.components(separatedBy: "\r\n").first { $0.lowercased().hasPrefix("content-length:") }
      .flatMap { Int($0.split(separator: ":")[1].trimmingCharacters(in: .whitespaces)) } ?? 0
    var body = [UInt8](repeating: 0, count: length)
    var received = 0
    while received < length {
      let count = body.withUnsafeMutableBytes { raw -> Int in
        guard let base = raw.baseAddress else { return -1 }
        return recv(fd, base + received, length - received, 0)
      }
      if count <= 0 { break }
      received += count
    }
    return head + String(decoding: body.prefix(received), as: UTF8.self)
  }
}
