import Dispatch
import PosixLock

/// Stops libvips' computation of an image when a deadline passes, so a rescue that runs out of
/// time stops consuming the process instead of running on after its caller was answered.
///
/// A timer on a global queue kills the images (`vips_image_set_kill`) at the deadline: libvips
/// checks the flag as the saver pulls strips through the pipeline, so the save fails soon after
/// and the rescue throws `deadline_exceeded`. Soon, not at once: an evaluation libvips nests
/// inside (the frames of an animation) does not look at the flag, so the stop came 4 ms to 6.4 s
/// after the deadline on a loaded 2-core machine, against 37 s for the whole conversion.
/// Work libvips does outside an evaluation (a loader's header, the scans libjpeg consumes in
/// one call) is not interrupted; ``ImageWorkBounds`` bounds it before it starts.
final class VipsDeadline: Sendable {
  /// Whether the watched computation still runs (the image is alive while it is set), and
  /// whether the timer killed it; both under one lock, so a kill never meets a freed image.
  private let state = Locked<(running: Bool, killed: Bool)>((true, false))

  private init() {}

  /// Runs `body` (a save of the last of `images`) with every one of `images` killed if
  /// `deadline` passes first; without a deadline, `body` just runs. The caller keeps its
  /// references to `images` until this returns.
  /// - Returns: what `body` returns, and whether the deadline stopped the computation.
  static func watching<T>(
    _ images: [OpaquePointer], in vips: Libvips, until deadline: ContinuousClock.Instant?, _ body: () -> T
  ) -> (result: T, stopped: Bool) {
    guard let deadline else { return (body(), false) }
    let watch = VipsDeadline()
    let pointers = images.map { UInt(bitPattern: Int(bitPattern: UnsafeRawPointer($0))) }
    let left = ContinuousClock.now.duration(to: deadline)
    let nanoseconds =
      left <= .zero
      ? 0
      : Int(left.components.seconds) * 1_000_000_000
        + Int(left.components.attoseconds / 1_000_000_000)
    BackgroundWork.deadlines.asyncAfter(deadline: .now() + .nanoseconds(nanoseconds)) {
      watch.state.withLock { state in
        guard state.running else { return }
        state.killed = true
        for pointer in pointers { vips.setKill(OpaquePointer(bitPattern: pointer), 1) }
      }
    }
    let result = body()
    let killed = watch.state.withLock { state in
      state.running = false
      return state.killed
    }
    return (result, killed)
  }
}
