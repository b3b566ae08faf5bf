import Foundation

extension Pipe {
  /// A pipe whose two descriptors are closed on `exec`: a child started by another test (a
  /// server that runs for seconds) does not inherit them. Foundation's `Pipe()` leaves them
  /// open across `exec`, and a child of another test holding this pipe's writing end kept a
  /// reader from ever seeing its end: a command-line test waited on its stdin for good while
  /// a concurrent serve test's process held it. The child this pipe is for still gets its end:
  /// `Process` duplicates it onto 0, 1 or 2, which stay open.
  public static func closingOnExec() -> Pipe {
    let pipe = Pipe()
    for handle in [pipe.fileHandleForReading, pipe.fileHandleForWriting] {
      _ = fcntl(handle.fileDescriptor, F_SETFD, FD_CLOEXEC)
    }
    return pipe
  }
}

extension Process {
  /// `run()`, then the parent's copies of the child's ends of its standard streams closed.
  ///
  /// A `Process` of Foundation on Linux (swift-corelibs-foundation, Swift 6.3) is never freed,
  /// so neither are the pipes and file handles it holds: each run left its descriptors open
  /// (1,010 pipe ends at the peak of a parallel run; 686 descriptors in all once closed). That
  /// matters beyond the leak: `run()` reads `/proc/self/fd` past the end of a directory entry
  /// and crashes now and then when the process holds many descriptors (fixed upstream in
  /// swift-corelibs-foundation#5472). The child's ends are closed here, once the child holds
  /// its own copies; the test's ends by ``closeStandardPipes()`` once it has read them.
  ///
  /// - Throws: what `run()` throws (the executable cannot be started).
  public func runClosingChildEnds() throws {
    try run()
    Self.close(standardOutput, pipeEnd: \.fileHandleForWriting)
    Self.close(standardError, pipeEnd: \.fileHandleForWriting)
    Self.close(standardInput, pipeEnd: \.fileHandleForReading)
  }

  /// Closes the test's ends of the child's standard pipes (the reading ends of its output and
  /// error, the writing end of its input): call it once the child has exited and its output is
  /// read. Descriptors already closed are left alone.
  public func closeStandardPipes() {
    for stream in [standardOutput, standardError] {
      if let pipe = stream as? Pipe { try? pipe.fileHandleForReading.close() }
    }
    if let pipe = standardInput as? Pipe { try? pipe.fileHandleForWriting.close() }
  }

  /// Closes `stream`'s end `pipeEnd` when it is a pipe, or the handle itself when it is a file
  /// the test opened (never the null device or the test's own standard streams).
  private static func close(_ stream: Any?, pipeEnd: KeyPath<Pipe, FileHandle>) {
    if let pipe = stream as? Pipe {
      try? pipe[keyPath: pipeEnd].close()
    } else if let handle = stream as? FileHandle, handle !== FileHandle.nullDevice, handle.fileDescriptor > 2
    {
      try? handle.close()
    }
  }

  /// Waits for the process to exit, suspended between looks (every 2 ms); its termination
  /// status. Foundation's `waitUntilExit()` is not used: it spins its run loop at full speed
  /// until the child exits, taking a whole core (of two) from every other test meanwhile.
  @discardableResult
  public func exitStatus() async -> Int32 {
    while isRunning { try? await Task.sleep(for: .milliseconds(2)) }
    return terminationStatus
  }

  /// Whether the process has ended as the kernel sees it: `/proc/PID/stat` gone, or its state
  /// a zombie (`Z`) or dead (`X`). `isRunning` turns false only once Foundation has reaped the
  /// child, on a thread of libdispatch's pool, which a full parallel run keeps busy: a serve
  /// process that had exited was still "running" for Foundation 10 s later.
  public var hasEnded: Bool {
    guard let state = ProcStat.state(processIdentifier) else { return true }
    return state == "Z" || state == "X"
  }

  /// The status of a child that has ended, read from the kernel without reaping it
  /// (`waitid` with `WNOWAIT`: Foundation still reaps it as before), as Foundation's
  /// `terminationStatus` gives it (the exit code, or the signal's number); `nil` while it runs,
  /// or once Foundation has reaped it (then `terminationStatus` has it).
  ///
  /// Foundation notices a child's end on a thread of its own that a loaded parallel run kept
  /// from running for over 30 s; the kernel has the status as soon as the child is a zombie.
  public var unreapedTerminationStatus: Int32? {
    var info = siginfo_t()
    guard waitid(P_PID, id_t(processIdentifier), &info, WEXITED | WNOWAIT | WNOHANG) == 0,
      info._sifields._sigchld.si_pid == processIdentifier
    else { return nil }
    return info._sifields._sigchld.si_status
  }

  /// Blocks until the process exits, sleeping 1 ms between looks: `waitUntilExit()` without
  /// its spin, for code already on a thread of its own.
  public func blockUntilExit() {
    while isRunning { usleep(1000) }
  }
}
