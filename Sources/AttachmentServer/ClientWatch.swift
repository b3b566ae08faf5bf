import Glibc

/// Whether the client of a suspended request is still there.
///
/// A suspended connection is not polled by libmicrohttpd, so a client that hangs up while its
/// answer is being made (a CDN that gave up, a closed app) goes unseen until the answer is
/// written. The request's task asks this every 100 ms instead, and a request whose client has
/// gone stops waiting: when nobody else waits for its URL, the pipeline call is cancelled, and
/// a rescue under way has its worker killed (``FetchAdmission/abandon(_:)``).
enum ClientWatch {
  /// `POLLRDHUP` (Linux): the peer closed its side.
  private static let peerClosed: Int16 = 0x2000

  /// Whether `socket`'s peer has closed the connection (or it failed). A client that only
  /// shuts down its sending side after the request counts as gone (HTTP clients do not).
  static func hasHungUp(_ socket: Int32) -> Bool {
    guard socket >= 0 else { return false }
    var descriptor = pollfd(fd: socket, events: peerClosed, revents: 0)
    guard poll(&descriptor, 1, 0) > 0 else { return false }
    return descriptor.revents & (peerClosed | Int16(POLLHUP) | Int16(POLLERR)) != 0
  }
}
