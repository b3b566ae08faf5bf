import Glibc
import TestSupport
import TestTraits
import Testing

@testable import AttachmentKit

/// A child process started by the host while a download is open must not inherit the
/// download's connection: if it did, the connection would stay open (no FIN reaches the
/// server) for as long as the child lives, after libcurl had closed it.
@Suite("Downloader: sockets are not inherited", .threadOfItsOwn)
struct InheritedSocketTests {
  @Test(
    "a child spawned mid-download does not hold the connection open once the download is refused",
    arguments: [false, true])
  func childDoesNotHoldTheConnection(allowPrivateNetworks: Bool) async throws {
    // Given a route that waits, once asked, until the test has started a child process, then
    // sends a 404's head and waits for the client to hang up
    let server = try TestHTTPServer.start()
    defer { server.stop() }
    let asked = Flag()
    let childStarted = Flag()
    let hungUp = Flag()
    server.route("/after-child") { _, writer in
      asked.set()
      for _ in 0..<12000 where !childStarted.isSet { usleep(5_000) }
      _ = writer.writeHead(status: 404, headers: [("Content-Length", "1048576")])
      writer.waitForClientToClose()
      hungUp.set()
    }
    let scratch = try ScratchDirectory("inherit")
    defer { scratch.remove() }
    var configuration = DownloaderConfiguration.loopback
    configuration.allowPrivateNetworks = allowPrivateNetworks
    if !allowPrivateNetworks { configuration.allowedAddresses = ["127.0.0.1"] }
    let downloader = Downloader(configuration: configuration)
    let download = Task { () -> AttachmentError.Code? in
      do {
        let download = try await downloader.download(
          DownloadRequest(url: server.url("/after-child"), directory: scratch.path), timeout: generousTimeout)
        download.file.map { _ = unlink($0) }
        return nil
      } catch let error as AttachmentError {
        return error.code
      } catch {
        return nil
      }
    }

    // When a long-lived child is started while the connection is open (observed: the
    // request arrived)
    #expect(await asked.wait(upTo: eventWait), "the request never arrived")
    let child = try CleanSpawn.start(["sleep", "300"]).get()
    defer {
      kill(child, SIGKILL)
      var status: Int32 = 0
      waitpid(child, &status, 0)
    }
    childStarted.set()

    // Then the refusal closes the connection for the server too, while the child lives on
    #expect(await download.value == .httpStatus)
    #expect(await hungUp.wait(upTo: eventWait), "the connection stayed open in the child")
    #expect(kill(child, 0) == 0, "the child is still running")
    #expect(scratch.leftovers().isEmpty)
  }
}
