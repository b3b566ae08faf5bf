import Glibc

/// systemd's readiness protocol (`sd_notify(3)`, `Type=notify`) without libsystemd: one
/// datagram of `KEY=VALUE` lines to the `AF_UNIX` socket `$NOTIFY_SOCKET` names (a path, or an
/// abstract address when it starts with `@`). Without the variable (not under systemd), every
/// call does nothing. A send that fails is ignored: readiness is advice to the service manager,
/// never a reason to stop serving.
public struct ServiceNotifier: Sendable {
  /// The socket's address text as `$NOTIFY_SOCKET` gave it, or `nil`.
  public let socket: String?

  /// A notifier for `socket` (by default the process's `$NOTIFY_SOCKET`).
  public init(socket: String? = getenv("NOTIFY_SOCKET").map { String(cString: $0) }) {
    self.socket = socket.flatMap { $0.isEmpty ? nil : $0 }
  }

  /// `READY=1`: serve listens and answers (sent once the socket is bound and keys loaded).
  public func ready() { send("READY=1\nSTATUS=listening\nMAINPID=\(getpid())") }

  /// `RELOADING=1` with the monotonic clock, as systemd asks: a SIGHUP reload begins (``ready()``
  /// ends it).
  public func reloading() {
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    let microseconds = Int64(now.tv_sec) * 1_000_000 + Int64(now.tv_nsec) / 1000
    send("RELOADING=1\nMONOTONIC_USEC=\(microseconds)")
  }

  /// `STOPPING=1`: the drain began.
  public func stopping() { send("STOPPING=1\nSTATUS=draining") }

  /// Sends `message` as one datagram; `false` when there is no socket or the send failed (an
  /// address too long for `sun_path`, no such socket, a full queue).
  @discardableResult
  public func send(_ message: String) -> Bool {
    guard let socket, var address = Self.address(socket) else { return false }
    let descriptor = Glibc.socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
    guard descriptor >= 0 else { return false }
    defer { _ = close(descriptor) }
    let length = socklen_t(MemoryLayout<sa_family_t>.size + socket.utf8.count)
    let bytes = Array(message.utf8)
    let sent = withUnsafePointer(to: &address) { pointer in
      pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { raw in
        bytes.withUnsafeBytes {
          sendto(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL), raw, length)
        }
      }
    }
    return sent == bytes.count
  }

  /// The `sockaddr_un` of `text`: a path, or with a leading `@` an abstract name (the `@`
  /// becomes a NUL byte). `nil` when it does not fit `sun_path`.
  static func address(_ text: String) -> sockaddr_un? {
    var address = sockaddr_un()
    address.sun_family = sa_family_t(AF_UNIX)
    var bytes = Array(text.utf8)
    guard !bytes.isEmpty, bytes.count < MemoryLayout.size(ofValue: address.sun_path) else { return nil }
    if bytes[0] == UInt8(ascii: "@") { bytes[0] = 0 }
    withUnsafeMutableBytes(of: &address.sun_path) { raw in
      for (index, byte) in bytes.enumerated() { raw[index] = byte }
    }
    return address
  }
}
