import AttachmentServer
import Glibc

/// `attachkit serve`'s life after it listens: the stop signals it waits for, SIGHUP's key
/// reload, the key file's permission warning, and the drain after SIGTERM or SIGINT.
extension ServeCommand {
  /// The drain after SIGTERM or SIGINT (`signal`): logged as it begins, what it cut, and its end.
  static func drain(_ proxy: AttachmentServer, after signal: Int32) {
    event("draining", [("signal", .string(signal == SIGTERM ? "SIGTERM" : "SIGINT"))])
    let drain = proxy.shutdown()
    if drain.cancelledFetches > 0 || drain.cutRequests > 0 {
      event(
        "drain_cut",
        [
          ("cancelledFetches", .int(Int64(drain.cancelledFetches))),
          ("cutRequests", .int(Int64(drain.cutRequests))),
        ])
    }
    event("stopped", [])
  }

  /// Waits for SIGTERM or SIGINT (which it returns), reloading the keys on each SIGHUP meanwhile.
  static func waitForStop(
    _ signals: inout sigset_t, reloading keyFile: String?, into proxy: AttachmentServer,
    notifier: ServiceNotifier
  ) -> Int32 {
    var received: Int32 = 0
    while true {
      while sigwait(&signals, &received) != 0 {}
      guard received == SIGHUP else { return received }
      notifier.reloading()
      reloadKeys(keyFile, into: proxy)
      notifier.ready()
    }
  }

  /// SIGHUP: re-reads the key file and verifies with its keys from now on; a file that cannot
  /// be read or holds no valid key keeps the old keys, and the event says why.
  static func reloadKeys(_ path: String?, into proxy: AttachmentServer) {
    guard let path else { return }
    do {
      let signer = try URLSigner(keyFile: path)
      proxy.replaceSigner(signer)
      event("keys_reloaded", [("keys", .int(Int64(signer.keys.count)))])
      warnIfReadableByOthers(path)
    } catch {
      event(
        "keys_reload_failed",
        [("message", .string("--key-file \(path): \(error.message) The old keys stay in use."))])
    }
  }

  /// Warns (an event) when the key file can be read by its group or by everyone: anyone who can
  /// read it can sign URLs this server fetches.
  static func warnIfReadableByOthers(_ path: String?) {
    var info = stat()
    guard let path, stat(path, &info) == 0, info.st_mode & (S_IRGRP | S_IROTH) != 0 else { return }
    event(
      "warning",
      [
        (
          "message",
          .string(
            "the key file \(path) is readable by others (mode \(String(info.st_mode & 0o777, radix: 8))): anyone who can read it can sign URLs; chmod 600 it."
          )
        )
      ])
  }

  /// Blocks SIGTERM, SIGINT and SIGHUP in the calling thread and returns the set. Every thread
  /// started from here on (libmicrohttpd's, the pipeline's) inherits the mask, so the signals
  /// are taken only by the `sigwait` that waits for them: SIGHUP reloads the keys, the others
  /// drain and stop.
  static func blockStopSignals() -> sigset_t {
    var signals = sigset_t()
    sigemptyset(&signals)
    sigaddset(&signals, SIGTERM)
    sigaddset(&signals, SIGINT)
    sigaddset(&signals, SIGHUP)
    // Under nohup SIGHUP is ignored, and an ignored signal never reaches sigwait.
    signal(SIGHUP, SIG_DFL)
    pthread_sigmask(SIG_BLOCK, &signals, nil)
    return signals
  }
}
