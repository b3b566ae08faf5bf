import Glibc

/// The two `/proc/PID` file layouts the worker code reads: `status` (`Name:` then its value,
/// one per line) and `stat` (fields after the command's closing parenthesis, which may itself
/// hold spaces and parentheses).
enum ProcText {
  /// The whitespace-separated fields after `name:` in a `status` text (`VmPeak` gives
  /// `["123", "kB"]`, `Uid` the real, effective, saved and file-system ids); `nil` when the
  /// line is not there.
  static func statusFields(_ name: String, in text: String) -> [Substring]? {
    for line in text.split(separator: "\n") where line.hasPrefix(name + ":") {
      return line.dropFirst(name.count + 1).split(whereSeparator: { $0 == " " || $0 == "\t" })
    }
    return nil
  }

  /// The first number after `name:` in a `status` text (`Threads`, or `VmPeak` in KiB).
  static func statusNumber(_ name: String, in text: String) -> Int64? {
    statusFields(name, in: text)?.first.flatMap { Int64($0) }
  }

  /// A `stat` text's fields after the command: state is field 0, the parent 1, the process
  /// group 2, the session 3, the terminal 4, utime 11, stime 12.
  static func statFields(_ text: String) -> [Substring] {
    guard let close = text.lastIndex(of: ")") else { return [] }
    return text[text.index(after: close)...].split(separator: " ")
  }
}

/// A process's `/proc/PID/status`, read through a descriptor opened before the worker confined
/// itself (Landlock refuses the path afterwards).
struct ProcStatus {
  private let descriptor: Int32

  /// Opens `/proc/self/status`; `nil` when it cannot.
  init?() {
    let descriptor = open("/proc/self/status", O_RDONLY | O_CLOEXEC)
    guard descriptor >= 0 else { return nil }
    self.descriptor = descriptor
  }

  /// A figure of the file (the first number on its line), e.g. `Threads`, or `VmPeak` in KiB.
  func figure(_ name: String) -> Int64? {
    var buffer = [UInt8](repeating: 0, count: 8192)
    let length = buffer.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress, $0.count, 0) }
    guard length > 0 else { return nil }
    return ProcText.statusNumber(name, in: String(decoding: buffer[0..<length], as: UTF8.self))
  }
}
