/// Runs `body` on a new thread of its own and returns its result (or its error) to the
/// awaiting task.
///
/// Swift's cooperative pool has one thread per core (two on the CI machine), and every test
/// of the process runs on it. A test that blocks a pool thread (waiting for a child process,
/// sleeping, reading a pipe or a socket, waiting on a semaphore) takes that thread from every
/// other test: their deadlines pass before their work is even scheduled. Wrap each such call
/// in this function instead; the awaiting task is suspended, not blocking, meanwhile.
///
/// ```swift
/// let digest = try await onOwnThread { () throws -> String in try blockingSHA256sum(bytes, in: path) }
/// ```
public func onOwnThread<T: Sendable, E: Error>(
  _ body: @escaping @Sendable () throws(E) -> T
) async throws(E) -> T {
  let result: Result<T, E> = await withCheckedContinuation { continuation in
    let run: @Sendable () -> Void = {
      continuation.resume(returning: Result { () throws(E) -> T in try body() })
    }
    // Without a new thread (resources exhausted), run it here: slower for the others, still
    // correct.
    if !spawnDetachedThread(run) { run() }
  }
  return try result.get()
}
