import AttachmentKit
import Glibc
import PosixLock

/// The answers of recent cache hits, kept for at most a second (like nginx's
/// `open_file_cache`): a hot URL asked thousands of times a second reads and parses its cache
/// record once a second instead of on every request.
///
/// A remembered hit is only a shortcut to the same file: the file is opened again for every
/// answer, and when that fails (a sweep removed it) the memo entry is dropped and the pipeline
/// asked. The origin's freshness still bounds every entry, and a second bounds how long a
/// newer record (a refresh) can go unseen. Entries are keyed by the normalized URL's bytes
/// (``URLKey``), never by `String` equality.
final class HitMemo: Sendable {
  private struct Entry {
    var attachment: Attachment
    var until: Double
  }

  /// How long a hit is remembered, in seconds.
  static let lifetime = 1.0
  /// The most URLs remembered; past it the memo starts again empty.
  static let capacity = 4096

  private let entries = Locked<[URLKey: Entry]>([:])

  /// The remembered hit for `url`, if it is still within its lifetime and freshness.
  func hit(_ url: URLKey, now: Double) -> Attachment? {
    entries.withLock { entries in
      guard let entry = entries[url] else { return nil }
      guard now < entry.until else {
        entries[url] = nil
        return nil
      }
      return entry.attachment
    }
  }

  /// Remembers a hit the pipeline answered at `now`.
  func remember(_ url: URLKey, _ attachment: Attachment, now: Double) {
    let until = min(now + Self.lifetime, attachment.freshUntil ?? now)
    guard until > now else { return }
    entries.withLock { entries in
      if entries.count >= Self.capacity { entries.removeAll(keepingCapacity: true) }
      entries[url] = Entry(attachment: attachment, until: until)
    }
  }

  /// Forgets `url` (its file could not be opened).
  func forget(_ url: URLKey) {
    _ = entries.withLock { $0.removeValue(forKey: url) }
  }

  /// The wall clock, in seconds since 1970.
  static func now() -> Double {
    var time = timespec()
    clock_gettime(CLOCK_REALTIME_COARSE, &time)
    return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
  }
}
