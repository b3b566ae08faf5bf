import PosixLock

/// Starts the downloader (its engine thread and libcurl's global state) on first use, so a
/// pipeline that only answers from the cache never loads libcurl.
final class LazyDownloader: Sendable {
  private let configuration: DownloaderConfiguration
  private let box = Locked<Downloader?>(nil)

  /// A downloader with `configuration`, made when first asked for.
  init(configuration: DownloaderConfiguration) {
    self.configuration = configuration
  }

  /// The downloader, started now if it was not yet.
  var downloader: Downloader {
    box.withLock { box in
      if let downloader = box { return downloader }
      let downloader = Downloader(configuration: configuration)
      box = downloader
      return downloader
    }
  }
}
