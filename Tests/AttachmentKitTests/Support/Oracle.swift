import Foundation
import TestSupport

/// The SHA-256 of `bytes` by coreutils' `sha256sum`: an oracle independent of the library's
/// own hashing (libcrypto through `SHA256Hasher`). Waits for the child on a thread of its own.
func sha256sum(_ bytes: [UInt8], in directory: String) async throws -> String {
  try await onOwnThread { () throws -> String in try blockingSHA256sum(bytes, in: directory) }
}

/// ``sha256sum(_:in:)`` for code already on a thread of its own (it blocks until the child
/// exits).
func blockingSHA256sum(_ bytes: [UInt8], in directory: String) throws -> String {
  let path = directory + "/oracle-\(UUID().uuidString.prefix(8)).bin"
  try writeTestFile(Data(bytes), to: path)
  defer { unlink(path) }
  let process = Process()
  process.executableURL = URL(fileURLWithPath: "/usr/bin/sha256sum")
  process.arguments = [path]
  let out = Pipe.closingOnExec()
  process.standardOutput = out
  try process.runClosingChildEnds()
  let data = out.fileHandleForReading.readDataToEndOfFile()
  process.blockUntilExit()
  process.closeStandardPipes()
  return String(decoding: data, as: UTF8.self).split(separator: " ").first.map(String.init) ?? ""
}
