import CMicroHTTPD
import Glibc

/// libmicrohttpd, loaded with `dlopen` when a server starts: linking it would map it (and its
/// GnuTLS dependencies) into every `attachkit` process, cache hits included. Types and
/// constants come from `microhttpd.h`; the functions are resolved here once.
struct MicroHTTPD: @unchecked Sendable {
  /// The loaded library, or `nil` when `libmicrohttpd.so.12` is not installed.
  static let shared: MicroHTTPD? = MicroHTTPD()

  let startDaemon: UnsafeMutableRawPointer
  let getDaemonInfo: UnsafeMutableRawPointer
  let getConnectionInfo: UnsafeMutableRawPointer
  let stopDaemon: @convention(c) (OpaquePointer?) -> Void
  let quiesceDaemon: @convention(c) (OpaquePointer?) -> Int32
  let suspendConnection: @convention(c) (OpaquePointer?) -> Void
  let resumeConnection: @convention(c) (OpaquePointer?) -> Void
  let queueResponse: @convention(c) (OpaquePointer?, UInt32, OpaquePointer?) -> MHD_Result
  let responseFromBuffer:
    @convention(c) (Int, UnsafeMutableRawPointer?, MHD_ResponseMemoryMode) -> OpaquePointer?
  let responseFromFile: @convention(c) (UInt64, Int32, UInt64) -> OpaquePointer?
  let addResponseHeader:
    @convention(c) (OpaquePointer?, UnsafePointer<CChar>?, UnsafePointer<CChar>?) -> MHD_Result
  let destroyResponse: @convention(c) (OpaquePointer?) -> Void
  let lookupValue:
    @convention(c) (OpaquePointer?, MHD_ValueKind, UnsafePointer<CChar>?) -> UnsafePointer<CChar>?

  private init?() {
    var loaded: UnsafeMutableRawPointer?
    for name in ["libmicrohttpd.so.12", "libmicrohttpd.so"] {
      loaded = dlopen(name, RTLD_NOW | RTLD_LOCAL)
      if loaded != nil { break }
    }
    guard let handle = loaded else { return nil }
    func function<T>(_ name: String, as type: T.Type) -> T? {
      dlsym(handle, name).map { unsafeBitCast($0, to: type) }
    }
    guard let startDaemon = dlsym(handle, "MHD_start_daemon"),
      let getDaemonInfo = dlsym(handle, "MHD_get_daemon_info"),
      let getConnectionInfo = dlsym(handle, "MHD_get_connection_info"),
      let stopDaemon = function("MHD_stop_daemon", as: (@convention(c) (OpaquePointer?) -> Void).self),
      let quiesceDaemon = function("MHD_quiesce_daemon", as: (@convention(c) (OpaquePointer?) -> Int32).self),
      let suspendConnection = function(
        "MHD_suspend_connection", as: (@convention(c) (OpaquePointer?) -> Void).self),
      let resumeConnection = function(
        "MHD_resume_connection", as: (@convention(c) (OpaquePointer?) -> Void).self),
      let queueResponse = function(
        "MHD_queue_response", as: (@convention(c) (OpaquePointer?, UInt32, OpaquePointer?) -> MHD_Result).self
      ),
      let responseFromBuffer = function(
        "MHD_create_response_from_buffer",
        as: (@convention(c) (Int, UnsafeMutableRawPointer?, MHD_ResponseMemoryMode) -> OpaquePointer?).self),
      let responseFromFile = function(
        "MHD_create_response_from_fd_at_offset64",
        as: (@convention(c) (UInt64, Int32, UInt64) -> OpaquePointer?).self),
      let addResponseHeader = function(
        "MHD_add_response_header",
        as: (@convention(c) (OpaquePointer?, UnsafePointer<CChar>?, UnsafePointer<CChar>?) -> MHD_Result).self
      ),
      let destroyResponse = function(
        "MHD_destroy_response", as: (@convention(c) (OpaquePointer?) -> Void).self),
      let lookupValue = function(
        "MHD_lookup_connection_value",
        as: (@convention(c) (OpaquePointer?, MHD_ValueKind, UnsafePointer<CChar>?) -> UnsafePointer<CChar>?)
          .self)
    else { return nil }
    self.startDaemon = startDaemon
    self.getDaemonInfo = getDaemonInfo
    self.getConnectionInfo = getConnectionInfo
    self.stopDaemon = stopDaemon
    self.quiesceDaemon = quiesceDaemon
    self.suspendConnection = suspendConnection
    self.resumeConnection = resumeConnection
    self.queueResponse = queueResponse
    self.responseFromBuffer = responseFromBuffer
    self.responseFromFile = responseFromFile
    self.addResponseHeader = addResponseHeader
    self.destroyResponse = destroyResponse
    self.lookupValue = lookupValue
  }

  /// The socket descriptor of `connection`, or -1.
  func descriptor(_ connection: OpaquePointer?) -> Int32 {
    ak_mhd_connection_fd(getConnectionInfo, connection)
  }

  /// A request header's value (case-insensitive name), or `nil`. Call only on the thread MHD
  /// is running the connection's handler on.
  func header(_ connection: OpaquePointer?, _ name: String) -> String? {
    lookupValue(connection, .HEADER_KIND, name).map { String(cString: $0) }
  }
}
