#ifndef ATTACHMENTKIT_CCURL_SHIM_H
#define ATTACHMENTKIT_CCURL_SHIM_H

// Typed wrappers for libcurl's variadic calls, which Swift cannot call directly.
// One wrapper per argument type; no logic lives here.

#include <curl/curl.h>

typedef size_t (*ak_curl_data_callback)(char *ptr, size_t size, size_t nmemb, void *userdata);
typedef int (*ak_curl_xferinfo_callback)(void *clientp, curl_off_t dltotal, curl_off_t dlnow,
                                        curl_off_t ultotal, curl_off_t ulnow);
typedef int (*ak_curl_prereq_callback)(void *clientp, char *conn_primary_ip, char *conn_local_ip,
                                      int conn_primary_port, int conn_local_port);

static inline CURLcode ak_easy_setopt_long(CURL *handle, CURLoption option, long value) {
  return curl_easy_setopt(handle, option, value);
}

static inline CURLcode ak_easy_setopt_off_t(CURL *handle, CURLoption option, curl_off_t value) {
  return curl_easy_setopt(handle, option, value);
}

static inline CURLcode ak_easy_setopt_string(CURL *handle, CURLoption option, const char *value) {
  return curl_easy_setopt(handle, option, value);
}

static inline CURLcode ak_easy_setopt_pointer(CURL *handle, CURLoption option, void *value) {
  return curl_easy_setopt(handle, option, value);
}

static inline CURLcode ak_easy_setopt_slist(CURL *handle, CURLoption option, struct curl_slist *value) {
  return curl_easy_setopt(handle, option, value);
}

static inline CURLcode ak_easy_setopt_data_callback(CURL *handle, CURLoption option,
                                                    ak_curl_data_callback value) {
  return curl_easy_setopt(handle, option, value);
}

static inline CURLcode ak_easy_setopt_xferinfo_callback(CURL *handle, ak_curl_xferinfo_callback value) {
  return curl_easy_setopt(handle, CURLOPT_XFERINFOFUNCTION, value);
}

static inline CURLcode ak_easy_setopt_prereq_callback(CURL *handle, ak_curl_prereq_callback value) {
  return curl_easy_setopt(handle, CURLOPT_PREREQFUNCTION, value);
}

static inline CURLcode ak_easy_getinfo_long(CURL *handle, CURLINFO info, long *value) {
  return curl_easy_getinfo(handle, info, value);
}

static inline CURLcode ak_easy_getinfo_off_t(CURL *handle, CURLINFO info, curl_off_t *value) {
  return curl_easy_getinfo(handle, info, value);
}

static inline CURLcode ak_easy_getinfo_string(CURL *handle, CURLINFO info, char **value) {
  return curl_easy_getinfo(handle, info, value);
}

static inline CURLcode ak_easy_getinfo_pointer(CURL *handle, CURLINFO info, void **value) {
  return curl_easy_getinfo(handle, info, value);
}

static inline CURLMcode ak_multi_setopt_long(CURLM *handle, CURLMoption option, long value) {
  return curl_multi_setopt(handle, option, value);
}

#endif
