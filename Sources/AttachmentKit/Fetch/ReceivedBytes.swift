import Synchronization

/// The body bytes a download has received so far, readable from any thread while it runs: what
/// a caller that stops waiting (Ctrl-C, a deadline) still counts as transferred
/// (``AttachmentError/bytesReceived``). The transfer adds each chunk as libcurl hands it over;
/// a retry or a resume counts the bytes of every attempt.
public final class ReceivedBytes: Sendable {
  private let count = Atomic<Int64>(0)

  /// A count at zero.
  public init() {}

  /// The bytes received so far.
  public var value: Int64 { count.load(ordering: .relaxed) }

  /// Adds `bytes` received.
  func add(_ bytes: Int) { count.wrappingAdd(Int64(bytes), ordering: .relaxed) }
}
