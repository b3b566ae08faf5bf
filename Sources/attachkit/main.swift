// attachkit: the command line. This first cut only fetches; the cache, validation and the full
// command set arrive with their issues.
import AttachmentKit
import Glibc

var arguments = Array(CommandLine.arguments.dropFirst())
guard arguments.first == "fetch" else {
  let usage = "usage: attachkit fetch [--dir DIR] URL...\n"
  _ = usage.withCString { write(2, $0, strlen($0)) }
  exit(2)
}
arguments.removeFirst()
var directory = "/tmp"
if arguments.first == "--dir", arguments.count >= 2 {
  directory = arguments[1]
  arguments.removeFirst(2)
  mkdir(directory, 0o700)
}
let urls = arguments
let downloader = Downloader()
let results = await withTaskGroup(of: (Int, String).self) { group in
  for (index, url) in urls.enumerated() {
    group.addTask {
      let name = String(url.split(separator: "/").last ?? "")
      let start = ContinuousClock.now
      do throws(AttachmentError) {
        let download = try await downloader.download(
          DownloadRequest(url: url, directory: directory), timeout: .seconds(25))
        if let file = download.file { unlink(file) }
        let ms = (ContinuousClock.now - start).components.attoseconds / 1_000_000_000_000_000
        return (index, "\(name.padding(34)) ok      \(String(download.bytesReceived).padding(8)) \(ms) ms")
      } catch {
        return (index, "\(name.padding(34)) failed  \(error.code.rawValue): \(error.message)")
      }
    }
  }
  var rows: [(Int, String)] = []
  for await row in group { rows.append(row) }
  return rows.sorted { $0.0 < $1.0 }.map(\.1)
}
print("file".padding(34), "outcome", "bytes".padding(8), "time")
for row in results { print(row) }

extension String {
  func padding(_ width: Int) -> String {
    count >= width ? self : self + String(repeating: " ", count: width - count)
  }
}
