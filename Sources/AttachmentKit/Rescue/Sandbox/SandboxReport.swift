/// What a rescue worker's sandbox is on this machine: each layer in force or missing, and each
/// probe (an attack tried from inside a confined worker) blocked or allowed. Made by
/// ``RescueWorkers/sandboxReport(configuration:keyFile:)``; `attachkit sandbox` prints it.
public struct SandboxReport: Sendable {
  /// One layer's state.
  public struct Layer: Sendable {
    /// The layer.
    public var layer: SandboxLayer
    /// Whether it is in force.
    public var inForce: Bool
    /// What was seen (`ABI 7`, `uid 65534`, …) or why it is missing.
    public var detail: String
  }

  /// One probe's result.
  public struct Probe: Sendable {
    /// The probe.
    public var probe: SandboxProbe
    /// Whether the attack failed.
    public var blocked: Bool
    /// How: `killed by the seccomp filter (SIGSYS)`, `EACCES: Permission denied`, or, when
    /// allowed, what got through.
    public var detail: String
  }

  /// Every layer, in `SandboxLayer.allCases` order.
  public var layers: [Layer]
  /// Every probe, in ``SandboxProbe/all`` order.
  public var probes: [Probe]
  /// Why no worker could be checked, when none could (then every layer reads missing).
  public var problem: String?

  /// The layers not in force.
  public var missingLayers: [SandboxLayer] { layers.filter { !$0.inForce }.map(\.layer) }

  /// The probes that got through.
  public var allowedProbes: [SandboxProbe] { probes.filter { !$0.blocked }.map(\.probe) }

  /// Whether every layer is in force and every probe blocked.
  public var isComplete: Bool { problem == nil && missingLayers.isEmpty && allowedProbes.isEmpty }
}
