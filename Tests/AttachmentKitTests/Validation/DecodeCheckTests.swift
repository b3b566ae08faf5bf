import Foundation
import Synchronization
import TestSupport
import TestTraits
import Testing

@testable import AttachmentKit

/// Issue 52, item 3: "accepted" means a decoder starts it. Bundled samples with a few bits
/// flipped (`scripts/fuzz-accepted.sh`, kept in `Samples/repro`) that every structural probe
/// accepts and FFmpeg cannot start (damage inside ALAC, AAC, AV1, MP3 data, a track FFmpeg's
/// demuxer drops) are refused `undecodable` by the decode check, which decodes their first second
/// in a rescue worker; the samples they came from, and every accepted audio and video sample,
/// pass it.
@Suite("The decode check: a decoder starts what is accepted", .rescueTurn, .threadOfItsOwn)
struct DecodeCheckTests {
  /// One repro: its file, the sample it was mutated from, and a piece of its refusal's message.
  struct Repro: Sendable, CustomTestStringConvertible {
    let file: String
    let sample: String
    let message: String
    var testDescription: String { file }
  }

  static let repros: [Repro] = [
    // ffmpeg: "Invalid data found when processing input" for each of its 6 packets.
    Repro(file: "s1_caf-alac.caf", sample: "caf-alac.caf", message: "its audio (alac) does not start"),
    // alac: "invalid element channel count".
    Repro(file: "s2_caf-alac.caf", sample: "caf-alac.caf", message: "its audio (alac) does not start"),
    // aac: "channel element 0.1 is not allocated".
    Repro(file: "s8_aac-m4a.m4a", sample: "aac-m4a.m4a", message: "its audio (aac) does not start"),
    // aac: "Reserved bit set", "Number of bands (26) exceeds limit (6)".
    Repro(
      file: "s21_aac-isom-audio-only.mp4", sample: "aac-isom-audio-only.mp4",
      message: "its audio (aac) does not start"),
    // libdav1d: "Error parsing OBU data".
    Repro(file: "s29_mp4-av1.mp4", sample: "mp4-av1.mp4", message: "its video (av1) does not start"),
    // The cover art's JPEG says 40 bits a sample (mjpeg: "bits 40 is invalid"), so FFmpeg finds
    // no picture size: "Cannot determine format of input stream 0:1 after EOF".
    Repro(
      file: "s31_mp3-id3v2-cover.mp3", sample: "mp3-id3v2-cover.mp3",
      message: "its cover art (mjpeg) has no picture size FFmpeg can read"),
    // mov: "stream 0, missing mandatory atoms, broken header": the demuxer drops the track.
    Repro(file: "s31_mp4-hevc.mp4", sample: "mp4-hevc.mp4", message: "its video (hevc) does not start"),
    Repro(
      file: "s11_mov-moov-first.mov", sample: "mov-moov-first.mov", message: "its video (h264) does not start"
    ),
    // h264: "missing picture in access unit", "could not find codec parameters".
    Repro(
      file: "s20_mp4-fragmented.mp4", sample: "mp4-fragmented.mp4", message: "FFmpeg cannot read its streams"),
  ]

  /// A validator with the decode check's defaults.
  static let checking = Validator(decodeCheck: DecodeCheckConfiguration())

  /// Whether `validation` says its decode check could not run.
  static func unchecked(_ validation: Validation) -> Bool {
    validation.warnings.contains { $0.hasPrefix("Not opened by a decoder") }
  }

  @Test("each repro passes the probes, and the decode check refuses it undecodable", arguments: repros)
  func refused(_ repro: Repro) throws {
    // Given a file every structural probe accepts
    let path = Samples.repro(repro.file)
    _ = try Validator().validate(file: path)
    // When the decode check runs too, then it is refused, saying what did not start
    do {
      let validation = try Self.checking.validate(file: path)
      Issue.record("accepted: \(validation)")
    } catch {
      #expect(error.code == .undecodable, "\(error)")
      #expect(error.message.contains(repro.message), "\(error.message)")
      #expect(error.isRejection)
    }
    // and the sample it came from is accepted, checked
    #expect(!Self.unchecked(try Self.checking.validate(file: Samples.path(repro.sample))))
  }

  @Test("every accepted audio and video sample starts in its decoder")
  func samplesStart() throws {
    for entry in Samples.accepted {
      let validation = try Self.checking.validate(file: Samples.path(entry.file))
      #expect(!Self.unchecked(validation), "\(entry.file): \(validation.warnings)")
    }
  }

  @Test(
    "without a worker that starts, a file is accepted on its structure with a warning; PCM and images never ask for one"
  )
  func withoutAWorker() throws {
    // Given a decode check whose worker executable is not there (an extension without one)
    var configuration = DecodeCheckConfiguration()
    configuration.workers.executable = "/nonexistent/attachkit-rescue-worker"
    let validator = Validator(decodeCheck: configuration)
    // Then AAC and the ALAC repro are accepted as the probes alone accept them, and say so
    for path in [Samples.path("aac-m4a.m4a"), Samples.repro("s1_caf-alac.caf")] {
      let validation = try validator.validate(file: path)
      #expect(
        validation.warnings.contains {
          $0.hasPrefix(
            "Not opened by a decoder (its rescue worker cannot start): accepted on its structure alone")
        }, "\(validation.warnings)")
    }
    // and PCM, μ-law and an image need no decoder: no warning, no worker asked for
    for file in ["wav-pcm16.wav", "caf-pcm.caf", "aifc-ulaw.aifc", "jpeg-baseline.jpg"] {
      #expect(!Self.unchecked(try validator.validate(file: Samples.path(file))), "\(file)")
    }
  }

  @Test("a check that cannot finish ends at the deadline with deadline_exceeded, and its worker is killed")
  func deadline() async throws {
    // Given the pool's spare (started after a first check) stopped (SIGSTOP), and every FFmpeg
    // worker of this process after it, so that the check cannot finish on a machine of any speed
    let file = Samples.path("aac-m4a.m4a")
    _ = try Self.checking.validate(file: file)
    let done = Flag()
    async let stopped = Self.stopWorkers(until: done)
    // (up to 2 s: without a spare the check starts a worker, which the watch stops as it loads)
    let seen = ContinuousClock.now + .seconds(2)
    while done.stopped.load(ordering: .acquiring) == 0, ContinuousClock.now < seen {
      try await Task.sleep(for: .milliseconds(5))
    }
    // When an accepted AAC file is validated with a deadline 3 s away
    let started = ContinuousClock.now
    let result = Result { () throws(AttachmentError) in
      try Self.checking.validate(file: file, deadline: started + .seconds(3))
    }
    let elapsed = (ContinuousClock.now - started).inSeconds
    done.raised.store(true, ordering: .releasing)
    let workers = await stopped
    defer { for worker in workers { kill(worker, SIGCONT) } }
    // Then the answer is deadline_exceeded, at the deadline, and the worker it waited for is killed
    #expect(!workers.isEmpty, "no worker was seen")
    #expect(result.failure?.code == .deadlineExceeded, "\(result)")
    #expect(elapsed >= 2.9 && elapsed < 3 + deadlineMarginSeconds, "answered after \(elapsed) s")
    let end = ContinuousClock.now + eventWait
    while ContinuousClock.now < end, workers.allSatisfy(StoppedWorkers.isAlive) {
      try await Task.sleep(for: .milliseconds(5))
    }
    #expect(!workers.allSatisfy(StoppedWorkers.isAlive), "the stopped check's worker was not killed")
  }

  /// A flag another thread raises, and how many workers the watch has stopped.
  final class Flag: Sendable {
    let raised = Atomic<Bool>(false)
    let stopped = Atomic<Int>(0)
  }

  /// Stops with SIGSTOP every FFmpeg worker of this process as soon as it is seen (every 2 ms,
  /// on a thread of its own), until `done` is raised (or 60 s); the workers it stopped.
  static func stopWorkers(until done: Flag) async -> [Int32] {
    await onOwnThread { () -> [Int32] in
      var stopped: [Int32] = []
      let end = ContinuousClock.now + .seconds(60)
      while !done.raised.load(ordering: .acquiring), ContinuousClock.now < end {
        for worker in StoppedWorkers.workers(of: getpid(), library: "ffmpeg") where !stopped.contains(worker)
        {
          kill(worker, SIGSTOP)
          stopped.append(worker)
          done.stopped.store(stopped.count, ordering: .releasing)
        }
        usleep(2_000)
      }
      return stopped
    }
  }

  @Test("a miss is refused undecodable; an accepted one is checked, then served from the cache")
  func pipeline() async throws {
    // Given a pipeline with its defaults (the decode check on) and an origin serving both
    let fixture = try PipelineFixture("decode-check")
    defer { fixture.close() }
    let damaged = fixture.serve(Samples.repro("s8_aac-m4a.m4a"), name: "damaged.m4a")
    let good = fixture.serve(Samples.path("aac-m4a.m4a"), name: "good.m4a")

    // When the damaged file is fetched, then it is refused undecodable
    do {
      let answer = try await fixture.pipeline.attachment(for: damaged, timeout: generousTimeout)
      Issue.record("accepted: \(answer.validation)")
    } catch {
      #expect(error.code == .undecodable, "\(error)")
    }
    // and the good one is accepted, checked, then served from the cache
    let miss = try await fixture.pipeline.attachment(for: good, timeout: generousTimeout)
    #expect(miss.source == .network && !Self.unchecked(miss.validation))
    let hit = try await fixture.pipeline.attachment(for: good, timeout: generousTimeout)
    #expect(hit.source == .cache)
  }
}
