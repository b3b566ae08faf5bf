// sample-server: serves a directory over HTTP on 127.0.0.1 (an ephemeral port) for the
// README's main job and the benchmarks. Prints its base URL on the first line of stdout, then
// serves until stdin closes or it is signalled.
import Foundation
import TestSupport

let arguments = CommandLine.arguments.dropFirst()
guard let directory = arguments.first, arguments.count == 1 else {
  FileHandle.standardError.write(Data("usage: sample-server DIRECTORY\n".utf8))
  exit(2)
}
var isDirectory: ObjCBool = false
guard FileManager.default.fileExists(atPath: directory, isDirectory: &isDirectory), isDirectory.boolValue
else {
  FileHandle.standardError.write(Data("sample-server: not a directory: \(directory)\n".utf8))
  exit(2)
}
do {
  let server = try TestHTTPServer.start()
  server.serveDirectory(prefix: "/media", directory: directory)
  print(server.baseURL)
  fflush(nil)
  signal(SIGTERM, SIG_DFL)
  while true { pause() }
} catch {
  FileHandle.standardError.write(Data("sample-server: \(error)\n".utf8))
  exit(1)
}
