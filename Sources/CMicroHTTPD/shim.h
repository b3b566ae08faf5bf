#ifndef ATTACHMENTKIT_CMICROHTTPD_SHIM_H
#define ATTACHMENTKIT_CMICROHTTPD_SHIM_H

// libmicrohttpd's types and constants for Swift, and a typed wrapper for its variadic start
// call, which Swift cannot call directly. libmicrohttpd itself is loaded at run time (dlopen)
// only when `attachkit serve` starts, so the wrapper takes the resolved function pointer; the
// options travel as one MHD_OPTION_ARRAY. No logic lives here.

#include <microhttpd.h>

typedef struct MHD_Daemon *(*ak_mhd_start_daemon_fn)(unsigned int flags, uint16_t port,
                                                     MHD_AcceptPolicyCallback apc, void *apc_cls,
                                                     MHD_AccessHandlerCallback dh, void *dh_cls, ...);

static inline struct MHD_Daemon *ak_mhd_start_daemon(void *fn, unsigned int flags, uint16_t port,
                                                     MHD_AccessHandlerCallback handler, void *handler_cls,
                                                     const struct MHD_OptionItem *options) {
  return ((ak_mhd_start_daemon_fn)fn)(flags, port, NULL, NULL, handler, handler_cls, MHD_OPTION_ARRAY,
                                      options, MHD_OPTION_END);
}

typedef const union MHD_DaemonInfo *(*ak_mhd_get_daemon_info_fn)(struct MHD_Daemon *daemon,
                                                                 enum MHD_DaemonInfoType info_type, ...);

// The port the daemon listens on (useful after binding port 0), or 0.
static inline uint16_t ak_mhd_bound_port(void *fn, struct MHD_Daemon *daemon) {
  const union MHD_DaemonInfo *info = ((ak_mhd_get_daemon_info_fn)fn)(daemon, MHD_DAEMON_INFO_BIND_PORT);
  return info ? info->port : 0;
}

typedef const union MHD_ConnectionInfo *(*ak_mhd_get_connection_info_fn)(
    struct MHD_Connection *connection, enum MHD_ConnectionInfoType info_type, ...);

// The socket of a connection, or -1.
static inline int ak_mhd_connection_fd(void *fn, struct MHD_Connection *connection) {
  const union MHD_ConnectionInfo *info =
      ((ak_mhd_get_connection_info_fn)fn)(connection, MHD_CONNECTION_INFO_CONNECTION_FD);
  return info ? info->connect_fd : -1;
}

// The client's socket address (IPv4 or IPv6, as accepted), or NULL.
static inline const struct sockaddr *ak_mhd_client_address(void *fn, struct MHD_Connection *connection) {
  const union MHD_ConnectionInfo *info =
      ((ak_mhd_get_connection_info_fn)fn)(connection, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
  return info ? info->client_addr : NULL;
}

#endif
