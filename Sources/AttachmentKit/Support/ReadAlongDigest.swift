import PosixLock

/// The SHA-256 of a file, taken from the reads its checks make anyway.
///
/// A probe walks most formats from the start to the end (a JPEG's scan, a WAV's chunks), so
/// the bytes it reads in order are hashed as they pass and the file is read once, not once to
/// check and once more to hash. Whatever the walk skipped (an MP4's `mdat`) or left unread at
/// the end is read by ``finish(reading:)``. Reads out of order (a seek back, a jump ahead) are
/// not hashed; only the next bytes in order advance the digest, so the answer is the digest of
/// the whole file however the walk went.
///
/// A check thread owns it; the lock only makes it `Sendable` (``FileBytes`` is).
final class ReadAlongDigest: Sendable {
  private struct State {
    let hasher = SHA256Hasher()
    /// How many leading bytes are hashed.
    var covered: Int64 = 0
  }

  private let state = Locked(State())

  /// Makes an empty digest.
  init() {}

  /// Notes that `bytes` were read at `offset`; hashes the part that continues the digest.
  func saw(_ bytes: UnsafeRawBufferPointer, at offset: Int64) {
    state.withLock { state in
      let end = offset + Int64(bytes.count)
      guard offset <= state.covered, end > state.covered else { return }
      let skip = Int(state.covered - offset)
      state.hasher.update(UnsafeRawBufferPointer(rebasing: bytes[skip...]))
      state.covered = end
    }
  }

  /// Reads and hashes what is not hashed yet, in 256 KiB pieces, and returns the digest of
  /// all `file.count` bytes as 64 lower-case hex digits; `nil` when a read or libcrypto fails.
  /// Call once, after the last read that should count.
  func finish(reading file: FileBytes) -> String? {
    let piece = 256 * 1024
    var buffer: UnsafeMutableRawBufferPointer?
    defer { buffer?.deallocate() }
    return state.withLock { state -> String? in
      while state.covered < file.count {
        let count = Int(min(Int64(piece), file.count - state.covered))
        let target = buffer ?? UnsafeMutableRawBufferPointer.allocate(byteCount: piece, alignment: 16)
        buffer = target
        let slice = UnsafeMutableRawBufferPointer(rebasing: target[0..<count])
        guard file.readUnobserved(into: slice, at: Int(state.covered)) else { return nil }
        state.hasher.update(UnsafeRawBufferPointer(slice))
        state.covered += Int64(count)
      }
      return state.hasher.finalize()
    }
  }
}
