#ifndef ATTACHMENTKIT_CCURL_SHIM_H
#define ATTACHMENTKIT_CCURL_SHIM_H

// libcurl's types and constants for Swift, and typed wrappers for its variadic calls, which
// Swift cannot call directly. libcurl itself is loaded at run time (dlopen) on the first cache
// miss, so each wrapper takes the resolved function pointer; no logic lives here.

#include <curl/curl.h>

typedef size_t (*ak_curl_data_callback)(char *ptr, size_t size, size_t nmemb, void *userdata);
typedef int (*ak_curl_opensocket_callback_t)(void *clientp, curlsocktype purpose,
                                            struct curl_sockaddr *address);

typedef CURLcode (*ak_easy_setopt_fn)(CURL *, CURLoption, ...);
typedef CURLcode (*ak_easy_getinfo_fn)(CURL *, CURLINFO, ...);
typedef CURLMcode (*ak_multi_setopt_fn)(CURLM *, CURLMoption, ...);

static inline CURLcode ak_call_setopt_long(void *fn, CURL *handle, CURLoption option, long value) {
  return ((ak_easy_setopt_fn)fn)(handle, option, value);
}


static inline CURLcode ak_call_setopt_string(void *fn, CURL *handle, CURLoption option, const char *value) {
  return ((ak_easy_setopt_fn)fn)(handle, option, value);
}

static inline CURLcode ak_call_setopt_pointer(void *fn, CURL *handle, CURLoption option, void *value) {
  return ((ak_easy_setopt_fn)fn)(handle, option, value);
}

static inline CURLcode ak_call_setopt_slist(void *fn, CURL *handle, CURLoption option,
                                            struct curl_slist *value) {
  return ((ak_easy_setopt_fn)fn)(handle, option, value);
}

static inline CURLcode ak_call_setopt_data_callback(void *fn, CURL *handle, CURLoption option,
                                                    ak_curl_data_callback value) {
  return ((ak_easy_setopt_fn)fn)(handle, option, value);
}

static inline CURLcode ak_call_setopt_opensocket_callback(void *fn, CURL *handle,
                                                          ak_curl_opensocket_callback_t value) {
  return ((ak_easy_setopt_fn)fn)(handle, CURLOPT_OPENSOCKETFUNCTION, value);
}

static inline CURLcode ak_call_getinfo_long(void *fn, CURL *handle, CURLINFO info, long *value) {
  return ((ak_easy_getinfo_fn)fn)(handle, info, value);
}

static inline CURLcode ak_call_getinfo_off_t(void *fn, CURL *handle, CURLINFO info, curl_off_t *value) {
  return ((ak_easy_getinfo_fn)fn)(handle, info, value);
}

static inline CURLcode ak_call_getinfo_string(void *fn, CURL *handle, CURLINFO info, char **value) {
  return ((ak_easy_getinfo_fn)fn)(handle, info, value);
}

static inline CURLcode ak_call_getinfo_tls_session(void *fn, CURL *handle,
                                                   struct curl_tlssessioninfo **value) {
  return ((ak_easy_getinfo_fn)fn)(handle, CURLINFO_TLS_SSL_PTR, value);
}

static inline CURLMcode ak_call_multi_setopt_long(void *fn, CURLM *handle, CURLMoption option, long value) {
  return ((ak_multi_setopt_fn)fn)(handle, option, value);
}

#endif
