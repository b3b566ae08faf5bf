import CWorkerIO
import Glibc
import PosixLock

/// Which of the spawn's layers (namespaces, session, unprivileged user) this machine grants a
/// worker: all of them are asked for first; a step the kernel or a container refuses (user
/// namespaces off, no privilege for a namespace, a user id that cannot be mapped) drops the layer
/// it needs, and the set that worked is kept for the process's next workers.
enum SpawnLayers {
  /// Every layer a spawn can put in place.
  static let all = UInt32(
    AK_LAYER_USER_NAMESPACE | AK_LAYER_PID_NAMESPACE | AK_LAYER_NETWORK_NAMESPACE | AK_LAYER_IPC_NAMESPACE
      | AK_LAYER_MOUNT_NAMESPACE | AK_LAYER_SESSION | AK_LAYER_UNPRIVILEGED_USER)

  /// The namespaces among them.
  static let namespaces = UInt32(
    AK_LAYER_USER_NAMESPACE | AK_LAYER_PID_NAMESPACE | AK_LAYER_NETWORK_NAMESPACE | AK_LAYER_IPC_NAMESPACE
      | AK_LAYER_MOUNT_NAMESPACE)

  /// The layers the last worker started with (`nil`: none started yet).
  private static let granted = Locked<UInt32?>(nil)
  /// The most jobs any worker started so far may run.
  private static let mostJobs = Locked(1)

  /// The layers to ask for: all, less the unprivileged user when this process is not root (its
  /// worker is already unprivileged), or what a previous spawn found.
  static var requested: UInt32 {
    granted.withLock { $0 } ?? (getuid() == 0 ? all : all & ~UInt32(AK_LAYER_UNPRIVILEGED_USER))
  }

  /// Records the layers a worker started with, and the jobs it may run.
  static func record(_ layers: UInt32, jobs: Int) {
    granted.withLock { $0 = layers }
    mostJobs.withLock { $0 = max($0, jobs) }
  }

  /// The sandbox layers the workers started so far lack, as their spawn and this kernel show
  /// them (no probe is run: see ``RescueWorkers/sandboxReport(configuration:keyFile:)`` for the
  /// proof); empty while no worker has started.
  static func missingSoFar() -> [SandboxLayer] {
    guard let layers = granted.withLock({ $0 }) else { return [] }
    let jobs = mostJobs.withLock { $0 }
    var missing: [SandboxLayer] = []
    let spawned: [(Int, SandboxLayer)] = [
      (AK_LAYER_USER_NAMESPACE, .userNamespace), (AK_LAYER_PID_NAMESPACE, .pidNamespace),
      (AK_LAYER_NETWORK_NAMESPACE, .networkNamespace), (AK_LAYER_IPC_NAMESPACE, .ipcNamespace),
      (AK_LAYER_MOUNT_NAMESPACE, .mountNamespace), (AK_LAYER_SESSION, .session),
    ]
    for (bit, layer) in spawned where layers & UInt32(bit) == 0 { missing.append(layer) }
    if getuid() == 0, layers & UInt32(AK_LAYER_UNPRIVILEGED_USER) == 0 { missing.append(.unprivilegedUser) }
    if jobs > 1 || ak_landlock_abi() < 1 { missing.append(.landlock) }
    if layers & UInt32(AK_LAYER_USER_NAMESPACE) == 0 { missing.append(.processLimit) }
    if jobs > 1 { missing.append(.oneJobPerWorker) }
    return SandboxLayer.allCases.filter(missing.contains)
  }

  /// The layers to ask for after a spawn with `layers` failed at `stage`, or `nil` when dropping
  /// a layer cannot help.
  static func fallback(from layers: UInt32, failedAt stage: Int32) -> UInt32? {
    let user = UInt32(AK_LAYER_USER_NAMESPACE)
    switch stage {
    case Int32(AK_SPAWN_STAGE_CLONE), Int32(AK_SPAWN_STAGE_USER_MAP):
      if layers & user != 0 {
        // Without a user namespace of its own, only root may make the others.
        return getuid() == 0 ? layers & ~user : layers & ~namespaces
      }
      return layers & namespaces != 0 ? layers & ~namespaces : nil
    case Int32(AK_SPAWN_STAGE_IDENTITY):
      let unprivileged = UInt32(AK_LAYER_UNPRIVILEGED_USER)
      return layers & unprivileged != 0 ? layers & ~unprivileged : nil
    case Int32(AK_SPAWN_STAGE_SESSION):
      let session = UInt32(AK_LAYER_SESSION)
      return layers & session != 0 ? layers & ~session : nil
    default:
      return nil
    }
  }

  /// The user and group an unprivileged worker runs as: `nobody` and `nogroup` (65534).
  static let unprivilegedID: UInt32 = 65534
}
