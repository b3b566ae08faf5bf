import Dispatch

/// Where the library's background work runs: on threads that no other job can hold.
///
/// On Linux, libdispatch serves every concurrent queue, and each global queue, from a pool as
/// wide as the machine has cores (two on the CI machine), and adds a thread to it only when one
/// of its threads blocks, never when they are busy. Two long jobs there (two rescues, or the
/// hashing of two large bodies) would hold back every other item of that pool for as long as
/// they run: a deadline's timer, another request's file check, the timer that stops libvips.
/// A serial queue is served by the overcommitting pool instead, which gives each busy queue a
/// thread of its own at once. So each long job starts on a new serial queue of its own
/// (``start(_:qos:_:)``), and the short work of deadline timers runs on one serial queue kept for
/// it (``deadlines``), where nothing long ever runs.
enum BackgroundWork {
  /// Runs `work` now on a thread of its own (a new serial queue named `label`); it never waits
  /// for other background work to finish.
  static func start(
    _ label: String, qos: DispatchQoS = .userInitiated, _ work: @escaping @Sendable () -> Void
  ) {
    DispatchQueue(label: label, qos: qos).async(execute: work)
  }

  /// The queue deadline timers fire on: the downloader's watchdog and the rescue's libvips
  /// kill. Their work is a few microseconds (answer a waiter, post a command, set a flag); a job
  /// that can take longer must use ``start(_:qos:_:)``.
  static let deadlines = DispatchQueue(label: "AttachmentKit.deadlines", qos: .userInitiated)
}
