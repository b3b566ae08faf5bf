#define _GNU_SOURCE
#include "CWorkerIO.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

static volatile sig_atomic_t ak_signal_exit_status = 1;

static void ak_exit_with_status(int signal_number) {
  (void)signal_number;
  _exit(ak_signal_exit_status);
}

int ak_worker_socketpair(int pair[2]) {
  return socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair) == 0 ? 0 : -errno;
}

int ak_send_with_fds(int socket_fd, const void *bytes, size_t length, int fd1, int fd2) {
  struct iovec vector = {.iov_base = (void *)bytes, .iov_len = length};
  union {
    char buffer[CMSG_SPACE(2 * sizeof(int))];
    struct cmsghdr align;
  } control;
  memset(&control, 0, sizeof control);
  struct msghdr message = {.msg_iov = &vector, .msg_iovlen = 1};
  int fds[2];
  int count = 0;
  if (fd1 >= 0) fds[count++] = fd1;
  if (fd2 >= 0) fds[count++] = fd2;
  if (count > 0) {
    message.msg_control = control.buffer;
    message.msg_controllen = CMSG_SPACE(count * sizeof(int));
    struct cmsghdr *header = CMSG_FIRSTHDR(&message);
    header->cmsg_level = SOL_SOCKET;
    header->cmsg_type = SCM_RIGHTS;
    header->cmsg_len = CMSG_LEN(count * sizeof(int));
    memcpy(CMSG_DATA(header), fds, count * sizeof(int));
  }
  ssize_t sent;
  do {
    sent = sendmsg(socket_fd, &message, MSG_NOSIGNAL);
  } while (sent < 0 && errno == EINTR);
  if (sent < 0) return -errno;
  return (size_t)sent == length ? 0 : -EMSGSIZE;
}

ssize_t ak_receive_with_fds(int socket_fd, void *buffer, size_t capacity, int *fd1, int *fd2) {
  *fd1 = -1;
  *fd2 = -1;
  struct iovec vector = {.iov_base = buffer, .iov_len = capacity};
  union {
    char buffer[CMSG_SPACE(2 * sizeof(int))];
    struct cmsghdr align;
  } control;
  struct msghdr message = {
      .msg_iov = &vector, .msg_iovlen = 1, .msg_control = control.buffer, .msg_controllen = sizeof control.buffer};
  ssize_t received;
  do {
    received = recvmsg(socket_fd, &message, MSG_CMSG_CLOEXEC);
  } while (received < 0 && errno == EINTR);
  if (received < 0) return -errno;
  int fds[2] = {-1, -1};
  int count = 0;
  for (struct cmsghdr *header = CMSG_FIRSTHDR(&message); header != NULL; header = CMSG_NXTHDR(&message, header)) {
    if (header->cmsg_level != SOL_SOCKET || header->cmsg_type != SCM_RIGHTS) continue;
    size_t n = (header->cmsg_len - CMSG_LEN(0)) / sizeof(int);
    int *data = (int *)CMSG_DATA(header);
    for (size_t i = 0; i < n; i++) {
      if (count < 2) {
        fds[count++] = data[i];
      } else {
        close(data[i]);
      }
    }
  }
  *fd1 = fds[0];
  *fd2 = fds[1];
  if (message.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) {
    if (fds[0] >= 0) close(fds[0]);
    if (fds[1] >= 0) close(fds[1]);
    *fd1 = -1;
    *fd2 = -1;
    return -EMSGSIZE;
  }
  return received;
}

int ak_set_limit(pid_t pid, int resource, uint64_t soft, uint64_t hard) {
  struct rlimit64 limit = {.rlim_cur = soft, .rlim_max = hard};
  return prlimit64(pid, resource, &limit, NULL) == 0 ? 0 : -errno;
}

uint64_t ak_soft_limit(pid_t pid, int resource) {
  struct rlimit64 limit;
  if (prlimit64(pid, resource, NULL, &limit) != 0) return UINT64_MAX;
  return limit.rlim_cur;
}

uint64_t ak_hard_limit(pid_t pid, int resource) {
  struct rlimit64 limit;
  if (prlimit64(pid, resource, NULL, &limit) != 0) return UINT64_MAX;
  return limit.rlim_max;
}

int ak_under_sanitizer(void) {
  return dlsym(RTLD_DEFAULT, "__asan_init") != NULL || dlsym(RTLD_DEFAULT, "__tsan_init") != NULL;
}

int ak_name_this_thread(const char *name) {
  return prctl(PR_SET_NAME, name, 0, 0, 0) == 0 ? 0 : -errno;
}

const char *ak_library_path(const void *address) {
  Dl_info info;
  if (dladdr(address, &info) == 0) return NULL;
  return info.dli_fname;
}

int ak_exit_on_signal(int signal_number, int status) {
  if (signal_number <= 0 || signal_number >= NSIG) return -EINVAL;
  struct sigaction action;
  memset(&action, 0, sizeof action);
  action.sa_handler = ak_exit_with_status;
  ak_signal_exit_status = status;
  return sigaction(signal_number, &action, NULL) == 0 ? 0 : -errno;
}
