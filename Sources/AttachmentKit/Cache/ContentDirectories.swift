import Glibc
import PosixLock

/// The content fan-out directories a cache object has looked into more than once, each held
/// open, so a hit checks its content file's directory with `fstat` instead of a second walk of
/// the whole path (the two walks were a third of an in-process hit). The first look at each is
/// an `lstat` of its path, so a process that hits once (the command line) opens nothing. The file itself is still looked at by its
/// path (`lstat`): the path a hit answers is the one that was checked.
///
/// A directory is checked like every directory of the cache: opened without following a link,
/// and on every hit a directory of this user not writable by others, so a `chmod` is seen at
/// once. A directory removed from its path (a sweep rebuilding an unsafe one, a user's `rm -r`)
/// has no links left, which the same `fstat` shows: the path is opened again. The descriptor
/// replaced stays open until the cache object goes (another thread may be using it): one per
/// replacement, which only damage causes.
final class ContentDirectories: Sendable {
  private let layout: CacheLayout
  /// Open descriptors by fan-out digit (``unseen``, ``seenOnce``: not open yet), and replaced ones.
  private let state = Locked<(open: [Int32], retired: [Int32])>((Array(repeating: unseen, count: 16), []))
  private static let unseen: Int32 = -1
  private static let seenOnce: Int32 = -2

  /// Directories of `layout`'s content.
  init(layout: CacheLayout) {
    self.layout = layout
  }

  deinit {
    state.withLock { state in
      for descriptor in state.open + state.retired where descriptor >= 0 { close(descriptor) }
    }
  }

  /// What is at `path`, the content file named by `sha256` (never follows a link in its last
  /// component), with its ``ContentSeal`` when it is a regular file of this user in a safe
  /// fan-out directory (a file in an unsafe one is `.damaged`): the hit's one look at its
  /// content.
  func find(path: String, sha256: String) -> (found: CacheFiles.Found, seal: ContentSeal?) {
    var info = stat()
    guard lstat(path, &info) == 0 else { return (errno == ENOENT ? .missing : .damaged, nil) }
    let found = CacheFiles.classify(info)
    guard case .file = found else { return (found, nil) }
    guard let digit = sha256.utf8.first.flatMap(Self.digit), isSafe(digit) else { return (.damaged, nil) }
    return (found, ContentSeal(info))
  }

  /// Whether fan-out directory `digit` is a directory of this user not writable by others. The
  /// first look at a directory is an `lstat` of its path (a process that hits once, the command
  /// line, opens nothing); the second opens it, to hold.
  private func isSafe(_ digit: Int) -> Bool {
    let held = state.withLock { state -> Int32 in
      let held = state.open[digit]
      if held == Self.unseen { state.open[digit] = Self.seenOnce }
      return held
    }
    if held == Self.unseen {
      var info = stat()
      return lstat("\(layout.content)/\(CacheLayout.shards[digit])", &info) == 0
        && CacheFiles.directoryProblem(info, groupWritableAllowed: false) == nil
    }
    var directory = held >= 0 ? held : descriptor(digit, reopening: false)
    for reopening in [false, true] {
      if reopening { directory = descriptor(digit, reopening: true) }
      guard let open = directory else { return false }
      var info = stat()
      guard fstat(open, &info) == 0 else { return false }
      if info.st_nlink == 0 { continue }  // removed from its path: look at the one there now
      return CacheFiles.directoryProblem(info, groupWritableAllowed: false) == nil
    }
    return false
  }

  /// The open directory of fan-out `digit`, opened (and checked) on first use or, with
  /// `reopening`, again; `nil` when it is missing or unsafe.
  private func descriptor(_ digit: Int, reopening: Bool) -> Int32? {
    if !reopening, let open = state.withLock({ $0.open[digit] >= 0 ? $0.open[digit] : nil }) { return open }
    guard let opened = CacheFiles.openDirectory("\(layout.content)/\(CacheLayout.shards[digit])") else {
      return nil
    }
    return state.withLock { state in
      if !reopening, state.open[digit] >= 0 {
        close(opened)  // another thread opened it meanwhile
        return state.open[digit]
      }
      if state.open[digit] >= 0 { state.retired.append(state.open[digit]) }
      state.open[digit] = opened
      return opened
    }
  }

  /// The value of a lower-case hex digit's byte.
  private static func digit(_ byte: UInt8) -> Int? {
    switch byte {
    case UInt8(ascii: "0")...UInt8(ascii: "9"): Int(byte - UInt8(ascii: "0"))
    case UInt8(ascii: "a")...UInt8(ascii: "f"): Int(byte - UInt8(ascii: "a")) + 10
    default: nil
    }
  }
}
