import Glibc

/// Carries a thread body across `pthread_create`.
private final class ThreadBody {
  let run: @Sendable () -> Void

  init(_ run: @escaping @Sendable () -> Void) {
    self.run = run
  }
}

/// Runs `body` on a new detached POSIX thread (2 MiB stack).
/// Returns false when the thread could not be created.
func spawnDetachedThread(_ body: @escaping @Sendable () -> Void) -> Bool {
  var attributes = pthread_attr_t()
  guard pthread_attr_init(&attributes) == 0 else { return false }
  defer { pthread_attr_destroy(&attributes) }
  _ = pthread_attr_setdetachstate(&attributes, Int32(PTHREAD_CREATE_DETACHED))
  _ = pthread_attr_setstacksize(&attributes, 2 << 20)
  let box = Unmanaged.passRetained(ThreadBody(body))
  var thread = pthread_t()
  let result = pthread_create(
    &thread, &attributes,
    { argument in
      guard let argument else { return nil }
      Unmanaged<ThreadBody>.fromOpaque(argument).takeRetainedValue().run()
      return nil
    }, box.toOpaque())
  if result != 0 {
    box.release()
    return false
  }
  return true
}
