import CAV
import Glibc

/// A bounded hand-off of packets from the thread that copies them to the thread that checks
/// them (``CopyCheck``). Each entry is a reference to a packet (`av_packet_clone`: the bytes
/// are shared with the packet the writer takes, not copied); at most ``capacityBytes`` of
/// packet data wait at once, so a slow check holds the copy back rather than the worker's
/// memory growing with the file.
final class PacketQueue: @unchecked Sendable {
  /// The most packet bytes waiting at once (8 MiB: several groups of pictures of a 720p video
  /// at a push attachment's bitrates). A single larger packet is still let through, alone.
  static let capacityBytes = 8 << 20

  private let av: Libav
  private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
  private let changed = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
  // Guarded by `mutex`.
  private var packets: [UnsafeMutablePointer<AVPacket>] = []
  private var head = 0
  private var bytes = 0
  private var isClosed = false
  private var isRefused = false

  /// An empty queue.
  init(av: Libav) {
    self.av = av
    mutex.initialize(to: pthread_mutex_t())
    pthread_mutex_init(mutex, nil)
    changed.initialize(to: pthread_cond_t())
    pthread_cond_init(changed, nil)
  }

  deinit {
    for index in head..<packets.count { free(packets[index]) }
    pthread_cond_destroy(changed)
    changed.deinitialize(count: 1)
    changed.deallocate()
    pthread_mutex_destroy(mutex)
    mutex.deinitialize(count: 1)
    mutex.deallocate()
  }

  /// What ``push(_:)`` did.
  enum Pushed {
    /// The packet is queued.
    case queued
    /// The consumer takes no more packets (``refuse()``), or the queue is closed.
    case refused
    /// The packet could not be referenced (out of memory); nothing was queued.
    case outOfMemory
  }

  /// Queues a reference to `packet`, waiting while the queue is full.
  func push(_ packet: UnsafeMutablePointer<AVPacket>) -> Pushed {
    let size = Int(max(0, packet.pointee.size))
    pthread_mutex_lock(mutex)
    defer { pthread_mutex_unlock(mutex) }
    while !isRefused, bytes > 0, bytes + size > Self.capacityBytes { pthread_cond_wait(changed, mutex) }
    guard !isRefused, !isClosed else { return .refused }
    guard let reference = av.av_packet_clone(packet) else { return .outOfMemory }
    packets.append(reference)
    bytes += size
    pthread_cond_broadcast(changed)
    return .queued
  }

  /// The next packet, owned by the caller (free it with ``free(_:)``), waiting while the queue
  /// is empty and open; `nil` once it is closed and drained.
  func pop() -> UnsafeMutablePointer<AVPacket>? {
    pthread_mutex_lock(mutex)
    defer { pthread_mutex_unlock(mutex) }
    while head == packets.count, !isClosed { pthread_cond_wait(changed, mutex) }
    guard head < packets.count else { return nil }
    let packet = packets[head]
    head += 1
    if head == packets.count {
      packets.removeAll(keepingCapacity: true)
      head = 0
    }
    bytes -= Int(max(0, packet.pointee.size))
    pthread_cond_broadcast(changed)
    return packet
  }

  /// No more packets will be pushed: ``pop()`` returns what is left, then `nil`.
  func close() {
    pthread_mutex_lock(mutex)
    isClosed = true
    pthread_cond_broadcast(changed)
    pthread_mutex_unlock(mutex)
  }

  /// The consumer takes no more: waiting and later pushes return `false`, and what is queued is
  /// freed.
  func refuse() {
    pthread_mutex_lock(mutex)
    isRefused = true
    for index in head..<packets.count { free(packets[index]) }
    packets.removeAll()
    head = 0
    bytes = 0
    pthread_cond_broadcast(changed)
    pthread_mutex_unlock(mutex)
  }

  /// Frees a packet that ``pop()`` returned.
  func free(_ packet: UnsafeMutablePointer<AVPacket>) {
    var owned: UnsafeMutablePointer<AVPacket>? = packet
    av.av_packet_free(&owned)
  }
}
