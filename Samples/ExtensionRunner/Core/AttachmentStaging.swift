import Foundation

/// Gives each notification its own copies of the attachment files.
///
/// iOS *moves* the file of a `UNNotificationAttachment` into its own store when the content is
/// delivered, so an extension must never hand over a file it wants to keep: here, the cache's
/// content file. Each notification gets a fresh directory under ``root``, and each attachment a
/// copy named `N-IDENTIFIER.EXT` (the identifier reduced to safe characters) with the
/// canonical extension, which is what iOS reads the type from when no hint is given.
public struct AttachmentStaging: Sendable {
  /// The directory under which each notification gets its own directory.
  public let root: String

  /// Stages under `root`.
  public init(root: String) {
    self.root = root
  }

  /// The default root: `$TMPDIR/extension-runner-UID` (`/tmp` when `TMPDIR` is unset), under
  /// which each run makes a directory of its own (``runDirectory(under:)``).
  public static func defaultRoot() -> String {
    var base = ProcessInfo.processInfo.environment["TMPDIR"].flatMap { $0.isEmpty ? nil : $0 } ?? "/tmp"
    while base.count > 1 && base.hasSuffix("/") { base.removeLast() }
    return "\(base)/extension-runner-\(getuid())"
  }

  /// A new directory of one run (mode 0700) under `base`, made as ``makeNotificationDirectory()``
  /// checks roots (`base` created, this user's alone); `nil` when it cannot be made (the run
  /// then stages under `base` itself).
  public static func runDirectory(under base: String) -> String? {
    guard (try? AttachmentStaging(root: base).checkedRoot()) != nil else { return nil }
    return makeTemporaryDirectory(base + "/run-XXXXXX")
  }

  /// Makes ``root`` when missing and checks that it is a real directory of this user that no
  /// one else can write to.
  private func checkedRoot() throws {
    try FileManager.default.createDirectory(
      atPath: root, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
    var info = stat()
    guard lstat(root, &info) == 0, info.st_mode & S_IFMT == S_IFDIR, info.st_uid == getuid(),
      info.st_mode & (S_IWGRP | S_IWOTH) == 0
    else {
      throw CocoaError(.fileWriteNoPermission, userInfo: [NSFilePathErrorKey: root])
    }
  }

  /// `mkdtemp` of `template` (ending in `XXXXXX`): the directory made, or `nil`.
  private static func makeTemporaryDirectory(_ template: String) -> String? {
    var bytes = Array(template.utf8CString)
    let made = bytes.withUnsafeMutableBufferPointer { buffer in
      buffer.baseAddress.flatMap { mkdtemp($0) }
    }
    guard made != nil else { return nil }
    return String(decoding: bytes.dropLast().map { UInt8(bitPattern: $0) }, as: UTF8.self)
  }

  /// Makes a fresh directory for one notification (mode 0700) under ``root``, which must be a
  /// real directory of this user that no one else can write to (`/tmp` is shared).
  /// - Throws: the Foundation error when it cannot be made or ``root`` is not safe.
  public func makeNotificationDirectory() throws -> String {
    try checkedRoot()
    guard let made = Self.makeTemporaryDirectory("\(root)/notification-XXXXXX") else {
      throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: root])
    }
    return made
  }

  /// Copies `source` into `directory` as `POSITION-IDENTIFIER.EXT` and returns the copy's path.
  /// - Throws: the Foundation error when the copy fails.
  public static func stage(
    _ source: String, position: Int, identifier: String, fileExtension: String, in directory: String
  ) throws -> String {
    let safe = String(identifier.unicodeScalars.prefix(64).map(Self.safeCharacter))
    let destination = "\(directory)/\(position)-\(safe).\(fileExtension)"
    try FileManager.default.copyItem(atPath: source, toPath: destination)
    return destination
  }

  /// Writes `bytes` into `directory` as `POSITION-IDENTIFIER.EXT` (never over an existing file)
  /// and returns its path: the copy of a bundled file held in memory (``FallbackImage``).
  /// - Throws: the Foundation error when the file cannot be written.
  public static func stage(
    bytes: [UInt8], position: Int, identifier: String, fileExtension: String, in directory: String
  ) throws -> String {
    let safe = String(identifier.unicodeScalars.prefix(64).map(Self.safeCharacter))
    let destination = "\(directory)/\(position)-\(safe).\(fileExtension)"
    try Data(bytes).write(to: URL(fileURLWithPath: destination), options: .withoutOverwriting)
    return destination
  }

  /// A character kept in file names: ASCII letters, digits, `-` and `_`; anything else is `_`.
  private static func safeCharacter(_ scalar: Unicode.Scalar) -> Character {
    switch scalar {
    case "a"..."z", "A"..."Z", "0"..."9", "-", "_": Character(scalar)
    default: "_"
    }
  }
}
