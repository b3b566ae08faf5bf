import CCurl

/// libcurl, loaded on first use with `dlopen`: linking it would map about 35 shared libraries
/// (OpenSSL, nghttp2, LDAP, SSH…) into every process at start, cache hits included, for about
/// 6 ms. The types and constants still come from `curl.h`; the functions are resolved here
/// once, and the functions below (same names as libcurl's) call through the table.
struct Libcurl: @unchecked Sendable {
  /// The loaded library, or `nil` when `libcurl.so.4` is not installed.
  static let shared: Libcurl? = Libcurl()

  let globalInit: @convention(c) (Int) -> CURLcode
  let easyInit: @convention(c) () -> UnsafeMutableRawPointer?
  let easyCleanup: @convention(c) (UnsafeMutableRawPointer?) -> Void
  /// `curl_easy_reset`: a kept handle of the store's (``StoreHandles``) before its next request.
  let easyReset: @convention(c) (UnsafeMutableRawPointer?) -> Void
  let easyStrerror: @convention(c) (CURLcode) -> UnsafePointer<CChar>?
  /// `curl_easy_perform`: the store's requests (``StoreClient``), each on a thread of its own.
  let easyPerform: @convention(c) (UnsafeMutableRawPointer?) -> CURLcode
  let easySetopt: UnsafeMutableRawPointer
  let easyGetinfo: UnsafeMutableRawPointer
  let slistAppend:
    @convention(c) (UnsafeMutablePointer<curl_slist>?, UnsafePointer<CChar>?) -> UnsafeMutablePointer<
      curl_slist
    >?
  let slistFreeAll: @convention(c) (UnsafeMutablePointer<curl_slist>?) -> Void
  let multiInit: @convention(c) () -> UnsafeMutableRawPointer?
  let multiCleanup: @convention(c) (UnsafeMutableRawPointer?) -> CURLMcode
  let multiSetopt: UnsafeMutableRawPointer
  let multiAdd: @convention(c) (UnsafeMutableRawPointer?, UnsafeMutableRawPointer?) -> CURLMcode
  let multiRemove: @convention(c) (UnsafeMutableRawPointer?, UnsafeMutableRawPointer?) -> CURLMcode
  let multiPerform: @convention(c) (UnsafeMutableRawPointer?, UnsafeMutablePointer<Int32>?) -> CURLMcode
  let multiInfoRead:
    @convention(c) (UnsafeMutableRawPointer?, UnsafeMutablePointer<Int32>?) -> UnsafeMutablePointer<CURLMsg>?
  let multiPoll:
    @convention(c) (
      UnsafeMutableRawPointer?, UnsafeMutablePointer<curl_waitfd>?, UInt32, Int32,
      UnsafeMutablePointer<Int32>?
    ) -> CURLMcode
  let multiWakeup: @convention(c) (UnsafeMutableRawPointer?) -> CURLMcode
  let multiStrerror: @convention(c) (CURLMcode) -> UnsafePointer<CChar>?
  let urlNew: @convention(c) () -> OpaquePointer?
  let urlCleanup: @convention(c) (OpaquePointer?) -> Void
  let urlSet: @convention(c) (OpaquePointer?, CURLUPart, UnsafePointer<CChar>?, UInt32) -> CURLUcode
  let urlGet:
    @convention(c) (OpaquePointer?, CURLUPart, UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?, UInt32) ->
      CURLUcode
  let free: @convention(c) (UnsafeMutableRawPointer?) -> Void

  // flat table: one dlsym lookup per libcurl function the engine calls, then one assignment per
  // stored property, in the order they are declared; nil when the library or any symbol is
  // missing. There is no logic in between to split out.
  private init?() {
    guard let library = SharedLibrary(["libcurl.so.4", "libcurl.so"]),
      let globalInit = library.function("curl_global_init", as: (@convention(c) (Int) -> CURLcode).self),
      let easyInit = library.function(
        "curl_easy_init", as: (@convention(c) () -> UnsafeMutableRawPointer?).self),
      let easyCleanup = library.function(
        "curl_easy_cleanup", as: (@convention(c) (UnsafeMutableRawPointer?) -> Void).self),
      let easyReset = library.function(
        "curl_easy_reset", as: (@convention(c) (UnsafeMutableRawPointer?) -> Void).self),
      let easyStrerror = library.function(
        "curl_easy_strerror", as: (@convention(c) (CURLcode) -> UnsafePointer<CChar>?).self),
      let easyPerform = library.function(
        "curl_easy_perform", as: (@convention(c) (UnsafeMutableRawPointer?) -> CURLcode).self),
      let easySetopt = library.symbol("curl_easy_setopt"),
      let easyGetinfo = library.symbol("curl_easy_getinfo"),
      let slistAppend = library.function(
        "curl_slist_append",
        as: (@convention(c) (UnsafeMutablePointer<curl_slist>?, UnsafePointer<CChar>?) ->
          UnsafeMutablePointer<
            curl_slist
          >?).self),
      let slistFreeAll = library.function(
        "curl_slist_free_all", as: (@convention(c) (UnsafeMutablePointer<curl_slist>?) -> Void).self),
      let multiInit = library.function(
        "curl_multi_init", as: (@convention(c) () -> UnsafeMutableRawPointer?).self),
      let multiCleanup = library.function(
        "curl_multi_cleanup", as: (@convention(c) (UnsafeMutableRawPointer?) -> CURLMcode).self),
      let multiSetopt = library.symbol("curl_multi_setopt"),
      let multiAdd = library.function(
        "curl_multi_add_handle",
        as: (@convention(c) (UnsafeMutableRawPointer?, UnsafeMutableRawPointer?) -> CURLMcode).self),
      let multiRemove = library.function(
        "curl_multi_remove_handle",
        as: (@convention(c) (UnsafeMutableRawPointer?, UnsafeMutableRawPointer?) -> CURLMcode).self),
      let multiPerform = library.function(
        "curl_multi_perform",
        as: (@convention(c) (UnsafeMutableRawPointer?, UnsafeMutablePointer<Int32>?) -> CURLMcode).self),
      let multiInfoRead = library.function(
        "curl_multi_info_read",
        as: (@convention(c) (UnsafeMutableRawPointer?, UnsafeMutablePointer<Int32>?) -> UnsafeMutablePointer<
          CURLMsg
        >?).self),
      let multiPoll = library.function(
        "curl_multi_poll",
        as: (@convention(c) (
          UnsafeMutableRawPointer?, UnsafeMutablePointer<curl_waitfd>?, UInt32, Int32,
          UnsafeMutablePointer<Int32>?
        ) -> CURLMcode).self),
      let multiWakeup = library.function(
        "curl_multi_wakeup", as: (@convention(c) (UnsafeMutableRawPointer?) -> CURLMcode).self),
      let multiStrerror = library.function(
        "curl_multi_strerror", as: (@convention(c) (CURLMcode) -> UnsafePointer<CChar>?).self),
      let urlNew = library.function("curl_url", as: (@convention(c) () -> OpaquePointer?).self),
      let urlCleanup = library.function(
        "curl_url_cleanup", as: (@convention(c) (OpaquePointer?) -> Void).self),
      let urlSet = library.function(
        "curl_url_set",
        as: (@convention(c) (OpaquePointer?, CURLUPart, UnsafePointer<CChar>?, UInt32) -> CURLUcode).self),
      let urlGet = library.function(
        "curl_url_get",
        as: (@convention(c) (
          OpaquePointer?, CURLUPart, UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?, UInt32
        ) -> CURLUcode).self),
      let free = library.function("curl_free", as: (@convention(c) (UnsafeMutableRawPointer?) -> Void).self)
    else { return nil }
    self.globalInit = globalInit
    self.easyInit = easyInit
    self.easyCleanup = easyCleanup
    self.easyReset = easyReset
    self.easyStrerror = easyStrerror
    self.easyPerform = easyPerform
    self.easySetopt = easySetopt
    self.easyGetinfo = easyGetinfo
    self.slistAppend = slistAppend
    self.slistFreeAll = slistFreeAll
    self.multiInit = multiInit
    self.multiCleanup = multiCleanup
    self.multiSetopt = multiSetopt
    self.multiAdd = multiAdd
    self.multiRemove = multiRemove
    self.multiPerform = multiPerform
    self.multiInfoRead = multiInfoRead
    self.multiPoll = multiPoll
    self.multiWakeup = multiWakeup
    self.multiStrerror = multiStrerror
    self.urlNew = urlNew
    self.urlCleanup = urlCleanup
    self.urlSet = urlSet
    self.urlGet = urlGet
    self.free = free
  }
}

// The libcurl functions the engine uses, under their own names, calling through the table.
// The engine starts only when `Libcurl.shared` loaded, so the fallbacks below (a failure code,
// a nil handle) are reached only if called without it.

private let failed = CURLE_FAILED_INIT

func curl_global_init(_ flags: Int) -> CURLcode { Libcurl.shared?.globalInit(flags) ?? failed }

func curl_easy_init() -> UnsafeMutableRawPointer? { Libcurl.shared?.easyInit() }

func curl_easy_cleanup(_ easy: UnsafeMutableRawPointer?) { Libcurl.shared?.easyCleanup(easy) }

func curl_easy_reset(_ easy: UnsafeMutableRawPointer?) { Libcurl.shared?.easyReset(easy) }

func curl_easy_perform(_ easy: UnsafeMutableRawPointer?) -> CURLcode {
  Libcurl.shared?.easyPerform(easy) ?? failed
}

func curlErrorText(_ code: CURLcode) -> String {
  Libcurl.shared?.easyStrerror(code).map { String(cString: $0) } ?? "libcurl error \(code.rawValue)"
}

func curl_slist_append(
  _ list: UnsafeMutablePointer<curl_slist>?, _ line: String
) -> UnsafeMutablePointer<curl_slist>? {
  Libcurl.shared?.slistAppend(list, line) ?? list
}

func curl_slist_free_all(_ list: UnsafeMutablePointer<curl_slist>?) { Libcurl.shared?.slistFreeAll(list) }

func curl_multi_init() -> UnsafeMutableRawPointer? { Libcurl.shared?.multiInit() }

/// `reference` (a redirect's `Location`, absolute or relative) resolved against `base` by
/// libcurl's URL parser, the one that resolves it when following; `nil` when either does not
/// parse or libcurl is missing.
func curlResolve(_ reference: String, against base: String) -> String? {
  guard let table = Libcurl.shared, let handle = table.urlNew() else { return nil }
  defer { table.urlCleanup(handle) }
  guard table.urlSet(handle, CURLUPART_URL, base, 0) == CURLUE_OK,
    table.urlSet(handle, CURLUPART_URL, reference, 0) == CURLUE_OK
  else { return nil }
  var out: UnsafeMutablePointer<CChar>?
  guard table.urlGet(handle, CURLUPART_URL, &out, 0) == CURLUE_OK, let out else { return nil }
  defer { table.free(out) }
  return String(cString: out)
}

@discardableResult
func curl_multi_cleanup(_ multi: UnsafeMutableRawPointer?) -> CURLMcode {
  Libcurl.shared?.multiCleanup(multi) ?? CURLM_INTERNAL_ERROR
}

func curl_multi_add_handle(_ multi: UnsafeMutableRawPointer?, _ easy: UnsafeMutableRawPointer?) -> CURLMcode {
  Libcurl.shared?.multiAdd(multi, easy) ?? CURLM_INTERNAL_ERROR
}

@discardableResult
func curl_multi_remove_handle(_ multi: UnsafeMutableRawPointer?, _ easy: UnsafeMutableRawPointer?)
  -> CURLMcode
{
  Libcurl.shared?.multiRemove(multi, easy) ?? CURLM_INTERNAL_ERROR
}

@discardableResult
func curl_multi_perform(_ multi: UnsafeMutableRawPointer?, _ running: UnsafeMutablePointer<Int32>?)
  -> CURLMcode
{
  Libcurl.shared?.multiPerform(multi, running) ?? CURLM_INTERNAL_ERROR
}

func curl_multi_info_read(
  _ multi: UnsafeMutableRawPointer?, _ left: UnsafeMutablePointer<Int32>?
) -> UnsafeMutablePointer<CURLMsg>? {
  Libcurl.shared?.multiInfoRead(multi, left)
}

@discardableResult
func curl_multi_poll(
  _ multi: UnsafeMutableRawPointer?, _ fds: UnsafeMutablePointer<curl_waitfd>?, _ count: UInt32,
  _ timeoutMilliseconds: Int32, _ ready: UnsafeMutablePointer<Int32>?
) -> CURLMcode {
  Libcurl.shared?.multiPoll(multi, fds, count, timeoutMilliseconds, ready) ?? CURLM_INTERNAL_ERROR
}

@discardableResult
func curl_multi_wakeup(_ multi: UnsafeMutableRawPointer?) -> CURLMcode {
  Libcurl.shared?.multiWakeup(multi) ?? CURLM_INTERNAL_ERROR
}

func curlMultiErrorText(_ code: CURLMcode) -> String {
  Libcurl.shared?.multiStrerror(code).map { String(cString: $0) } ?? "libcurl multi error \(code.rawValue)"
}

// Typed wrappers for the variadic calls.

func ak_easy_setopt_long(_ easy: UnsafeMutableRawPointer?, _ option: CURLoption, _ value: Int) -> CURLcode {
  guard let table = Libcurl.shared else { return failed }
  return ak_call_setopt_long(table.easySetopt, easy, option, value)
}

func ak_easy_setopt_string(_ easy: UnsafeMutableRawPointer?, _ option: CURLoption, _ value: String)
  -> CURLcode
{
  guard let table = Libcurl.shared else { return failed }
  return ak_call_setopt_string(table.easySetopt, easy, option, value)  // libcurl copies strings
}

func ak_easy_setopt_pointer(
  _ easy: UnsafeMutableRawPointer?, _ option: CURLoption, _ value: UnsafeMutableRawPointer?
) -> CURLcode {
  guard let table = Libcurl.shared else { return failed }
  return ak_call_setopt_pointer(table.easySetopt, easy, option, value)
}

func ak_easy_setopt_slist(
  _ easy: UnsafeMutableRawPointer?, _ option: CURLoption, _ value: UnsafeMutablePointer<curl_slist>?
) -> CURLcode {
  guard let table = Libcurl.shared else { return failed }
  return ak_call_setopt_slist(table.easySetopt, easy, option, value)
}

func ak_easy_setopt_data_callback(
  _ easy: UnsafeMutableRawPointer?, _ option: CURLoption, _ value: ak_curl_data_callback?
) -> CURLcode {
  guard let table = Libcurl.shared else { return failed }
  return ak_call_setopt_data_callback(table.easySetopt, easy, option, value)
}

func ak_easy_setopt_opensocket_callback(
  _ easy: UnsafeMutableRawPointer?, _ value: ak_curl_opensocket_callback_t?
) -> CURLcode {
  guard let table = Libcurl.shared else { return failed }
  return ak_call_setopt_opensocket_callback(table.easySetopt, easy, value)
}

func ak_easy_getinfo_long(
  _ easy: UnsafeMutableRawPointer?, _ info: CURLINFO, _ value: UnsafeMutablePointer<Int>
) -> CURLcode {
  guard let table = Libcurl.shared else { return failed }
  return ak_call_getinfo_long(table.easyGetinfo, easy, info, value)
}

func ak_easy_getinfo_off_t(
  _ easy: UnsafeMutableRawPointer?, _ info: CURLINFO, _ value: UnsafeMutablePointer<curl_off_t>
) -> CURLcode {
  guard let table = Libcurl.shared else { return failed }
  return ak_call_getinfo_off_t(table.easyGetinfo, easy, info, value)
}

func ak_easy_getinfo_tls_session(
  _ easy: UnsafeMutableRawPointer?, _ value: UnsafeMutablePointer<UnsafeMutablePointer<curl_tlssessioninfo>?>
) -> CURLcode {
  guard let table = Libcurl.shared else { return failed }
  return ak_call_getinfo_tls_session(table.easyGetinfo, easy, value)
}

func ak_easy_getinfo_string(
  _ easy: UnsafeMutableRawPointer?, _ info: CURLINFO,
  _ value: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>
) -> CURLcode {
  guard let table = Libcurl.shared else { return failed }
  return ak_call_getinfo_string(table.easyGetinfo, easy, info, value)
}

func ak_multi_setopt_long(_ multi: UnsafeMutableRawPointer?, _ option: CURLMoption, _ value: Int) -> CURLMcode
{
  guard let table = Libcurl.shared else { return CURLM_INTERNAL_ERROR }
  return ak_call_multi_setopt_long(table.multiSetopt, multi, option, value)
}
