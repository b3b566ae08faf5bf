// extension-runner: a Notification Service Extension's whole job on Linux, on one APNs payload.
// Exit status: 0 whenever content was delivered, 2 for unusable arguments.
import AttachmentKit
import ExtensionRunnerCore
import Foundation

// The budget counts from the launch of the process, as iOS counts an extension's time.
let start = ProcessStart.instant()
// Rescues run in worker processes: this executable, started again as one.
RescueWorkers.runIfRequested()

/// Writes `text` to `handle` at once (the delivery must not wait in a buffer). A closed pipe
/// is not an error worth dying for: the content was delivered as far as this process can.
@Sendable func write(_ text: String, to handle: FileHandle) {
  try? handle.write(contentsOf: Data(text.utf8))
}

let output = RunnerOutput(
  standardOutput: { write($0, to: .standardOutput) }, standardError: { write($0, to: .standardError) })
signal(SIGPIPE, SIG_IGN)
let status = await RunnerProgram.run(Array(CommandLine.arguments.dropFirst()), start: start, output: output)
// Rescue workers that ran without a sandbox layer are named once, as `attachkit fetch` does.
let missingLayers = RescueWorkers.missingSandboxLayers()
if !missingLayers.isEmpty {
  output.standardError(
    "extension-runner: warning: rescue workers run without these sandbox layers: \(missingLayers.map(\.rawValue).joined(separator: ", ")) (see attachkit sandbox)\n"
  )
}
exit(status)
