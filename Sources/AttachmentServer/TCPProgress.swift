import Glibc

/// What the kernel knows about a TCP connection's progress (`TCP_INFO`): bytes received from
/// the client, bytes of ours the client acknowledged, and how long ago data last arrived.
///
/// This is what the server's own timeouts measure (``ConnectionWatch``): libmicrohttpd counts
/// activity only when it reads or writes, so a client draining a large send buffer slowly looked
/// idle to it, and one sending a header byte a second looked busy.
struct TCPProgress: Equatable, Sendable {
  /// Payload bytes received on the connection since it opened (`tcpi_bytes_received`).
  var received: UInt64
  /// Payload bytes sent and acknowledged by the peer since it opened (`tcpi_bytes_acked`):
  /// what the client really got.
  var acknowledged: UInt64
  /// Milliseconds since data last arrived (`tcpi_last_data_recv`).
  var millisecondsSinceData: UInt32
  /// Payload bytes the server has written to the socket since it opened: sent once
  /// (`tcpi_bytes_sent` less `tcpi_bytes_retrans`) or still queued (`tcpi_notsent_bytes`); `nil`
  /// on kernels before 4.19.
  var written: UInt64? = nil

  // Offsets in Linux's `struct tcp_info` (linux/tcp.h, a stable ABI that only grows); glibc's
  // copy of the struct stops before the byte counters.
  private static let lastDataReceivedOffset = 52
  private static let bytesAcknowledgedOffset = 120
  private static let bytesReceivedOffset = 128
  private static let needed = 136
  private static let notSentOffset = 144
  private static let bytesSentOffset = 200
  private static let bytesRetransmittedOffset = 208
  private static let neededForWritten = 216
  /// `TCP_INFO` (netinet/tcp.h).
  private static let tcpInfo: Int32 = 11

  /// The progress of the TCP socket `descriptor`, or `nil` when it is not one (or the kernel
  /// is older than Linux 4.1, which added the byte counters).
  static func of(_ descriptor: Int32) -> TCPProgress? {
    // On the stack: this runs a few times per request and five times a second per connection.
    withUnsafeTemporaryAllocation(byteCount: 256, alignment: 8) { raw -> TCPProgress? in
      raw.initializeMemory(as: UInt8.self, repeating: 0)
      var length = socklen_t(raw.count)
      guard getsockopt(descriptor, Int32(IPPROTO_TCP), tcpInfo, raw.baseAddress, &length) == 0,
        Int(length) >= needed
      else { return nil }
      let bytes = UnsafeRawBufferPointer(raw)
      var progress = TCPProgress(
        received: bytes.loadUnaligned(fromByteOffset: bytesReceivedOffset, as: UInt64.self),
        acknowledged: bytes.loadUnaligned(fromByteOffset: bytesAcknowledgedOffset, as: UInt64.self),
        millisecondsSinceData: bytes.loadUnaligned(fromByteOffset: lastDataReceivedOffset, as: UInt32.self))
      if Int(length) >= neededForWritten {
        let sent = bytes.loadUnaligned(fromByteOffset: bytesSentOffset, as: UInt64.self)
        let again = bytes.loadUnaligned(fromByteOffset: bytesRetransmittedOffset, as: UInt64.self)
        let queued = bytes.loadUnaligned(fromByteOffset: notSentOffset, as: UInt32.self)
        progress.written = sent &- again &+ UInt64(queued)
      }
      return progress
    }
  }
}
