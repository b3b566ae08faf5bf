// attachkit-rescue-worker: a rescue worker process and nothing else (see RescueWorkers in
// AttachmentKit). Started by a rescue worker pool with its socket as descriptor 3; exits when
// the pool closes it.
import AttachmentKit
import Glibc

exit(RescueWorkers.runWorker())
