import Synchronization

/// A shared counter handing out work item indices to concurrent workers.
final class WorkQueue: Sendable {
  private let next = Atomic<Int>(0)
  /// How many items there are.
  let count: Int

  /// Makes a queue of items `0..<count`.
  init(count: Int) {
    self.count = count
  }

  /// The next item index, or `nil` when all are taken.
  func take() -> Int? {
    let index = next.add(1, ordering: .relaxed).oldValue
    return index < count ? index : nil
  }
}

/// Runs `body` for every index in `0..<count` with at most `width` in flight at once, and
/// returns the results in index order. The first error thrown is rethrown after every worker
/// stops.
func concurrently<T: Sendable>(
  count: Int, width: Int, _ body: @escaping @Sendable (Int) async throws -> T
) async throws -> [T] {
  let queue = WorkQueue(count: count)
  return try await withThrowingTaskGroup(of: [(Int, T)].self) { group in
    for _ in 0..<max(1, min(width, count)) {
      group.addTask {
        var done: [(Int, T)] = []
        while let index = queue.take() {
          done.append((index, try await body(index)))
        }
        return done
      }
    }
    var all: [(Int, T)] = []
    for try await part in group { all += part }
    return all.sorted { $0.0 < $1.0 }.map(\.1)
  }
}

/// A deterministic shuffle (xorshift from `seed`), so runs visit items in the same order.
func shuffled<T>(_ items: [T], seed: UInt64) -> [T] {
  var result = items
  var state = seed | 1
  guard result.count > 1 else { return result }
  for index in stride(from: result.count - 1, to: 0, by: -1) {
    state ^= state << 13
    state ^= state >> 7
    state ^= state << 17
    let other = Int(state % UInt64(index + 1))
    result.swapAt(index, other)
  }
  return result
}
