import AttachmentKit
import Glibc

/// A one-line progress bar on standard error (a terminal that takes escape sequences only,
/// ``Terminal/takesEscapes(_:)``): done/total, bytes, rate, ETA, redrawn in place. Colour only
/// when `NO_COLOR` is unset.
final class ProgressBar: @unchecked Sendable {
  private let total: Int
  private let start = ContinuousClock.now
  private let color = Terminal.allowsColor(2)
  private var done = 0
  private var bytes: Int64 = 0
  private var lastDraw = ContinuousClock.now - .seconds(1)

  init(total: Int) {
    self.total = total
  }

  /// Counts one finished input.
  func advance(bytes added: Int64) {
    done += 1
    bytes += added
  }

  /// Redraws the bar (at most every 50 ms, and always at the end).
  func draw() {
    let now = ContinuousClock.now
    guard now - lastDraw >= .milliseconds(50) || done == total else { return }
    lastDraw = now
    let elapsed = max(0.001, (now - start).inSeconds)
    let width = 24
    let filled = total == 0 ? width : width * done / total
    let bar = String(repeating: "█", count: filled) + String(repeating: "░", count: width - filled)
    let rate = Double(bytes) / elapsed
    let remaining = done == 0 ? 0 : elapsed / Double(done) * Double(total - done)
    var line =
      "\(done)/\(total) \(bar) \(Table.bytes(bytes)) \(Table.bytes(Int64(rate)))/s ETA \(Int(remaining.rounded())) s"
    if color { line = "\u{1B}[36m" + line + "\u{1B}[0m" }
    Terminal.error("\r\u{1B}[2K" + line)
  }

  /// Erases the bar, so a result line can be printed cleanly.
  func clear() {
    Terminal.error("\r\u{1B}[2K")
  }
}
