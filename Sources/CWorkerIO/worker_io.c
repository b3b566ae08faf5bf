#define _GNU_SOURCE
#include "CWorkerIO.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

pid_t ak_spawn_worker(const char *path, char *const argv[], char *const envp[], int socket_fd) {
  posix_spawn_file_actions_t actions;
  posix_spawnattr_t attributes;
  int status = posix_spawn_file_actions_init(&actions);
  if (status != 0) return -status;
  status = posix_spawnattr_init(&attributes);
  if (status != 0) {
    posix_spawn_file_actions_destroy(&actions);
    return -status;
  }
  sigset_t empty, all;
  sigemptyset(&empty);
  sigfillset(&all);
  pid_t pid = -1;
  // dup2 onto 3 clears close-on-exec on the copy; when the socket already is 3, dup2 does
  // nothing, so it is moved away first by the caller (the socket is never 3 there: 0-2 are
  // open and the pair is made with close-on-exec after them).
  // Standard input, output and error are /dev/null: a worker holds none of its parent's
  // (a pipe a reader waits on, serve's log), and the libraries' warnings go nowhere.
  if ((status = posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)) == 0 &&
      (status = posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)) == 0 &&
      (status = posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)) == 0 &&
      (status = posix_spawn_file_actions_adddup2(&actions, socket_fd, AK_WORKER_SOCKET_FD)) == 0 &&
      (status = posix_spawn_file_actions_addclosefrom_np(&actions, AK_WORKER_SOCKET_FD + 1)) == 0 &&
      (status = posix_spawnattr_setsigmask(&attributes, &empty)) == 0 &&
      (status = posix_spawnattr_setsigdefault(&attributes, &all)) == 0 &&
      (status = posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF)) == 0) {
    status = posix_spawn(&pid, path, &actions, &attributes, argv, envp);
  }
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attributes);
  return status == 0 ? pid : -status;
}

int ak_worker_socketpair(int pair[2]) {
  return socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair) == 0 ? 0 : -errno;
}

int ak_try_network_socket(void) {
  int descriptor = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (descriptor < 0) return errno;
  close(descriptor);
  return 0;
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

// libseccomp's API (seccomp.h), declared here so the header is not needed to build: the
// worker opens the library at run time.
typedef void *scmp_filter_ctx;
struct scmp_arg_cmp {
  unsigned int arg;
  int op;
  uint64_t datum_a;
  uint64_t datum_b;
};
#define AK_SCMP_ACT_ALLOW 0x7fff0000U
#define AK_SCMP_ACT_ERRNO(x) (0x00050000U | ((x) & 0x0000ffffU))
enum { AK_SCMP_CMP_NE = 1, AK_SCMP_CMP_EQ = 4, AK_SCMP_CMP_MASKED_EQ = 7 };

int ak_worker_confine(void) {
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return -errno;
  void *library = dlopen("libseccomp.so.2", RTLD_NOW | RTLD_LOCAL);
  if (library == NULL) return -ENOENT;
  scmp_filter_ctx (*init)(uint32_t) = (scmp_filter_ctx (*)(uint32_t))dlsym(library, "seccomp_init");
  int (*add)(scmp_filter_ctx, uint32_t, int, unsigned int, const struct scmp_arg_cmp *) =
      (int (*)(scmp_filter_ctx, uint32_t, int, unsigned int, const struct scmp_arg_cmp *))dlsym(
          library, "seccomp_rule_add_array");
  int (*resolve)(const char *) = (int (*)(const char *))dlsym(library, "seccomp_syscall_resolve_name");
  int (*load)(scmp_filter_ctx) = (int (*)(scmp_filter_ctx))dlsym(library, "seccomp_load");
  void (*release)(scmp_filter_ctx) = (void (*)(scmp_filter_ctx))dlsym(library, "seccomp_release");
  if (!init || !add || !resolve || !load || !release) return -ENOENT;
  scmp_filter_ctx filter = init(AK_SCMP_ACT_ALLOW);
  if (filter == NULL) return -ENOMEM;
  static const char *const denied[] = {
      "socket", "socketpair", "connect", "bind", "listen", "accept", "accept4", "execve", "execveat", "fork",
      "vfork", "tkill", "ptrace", "process_vm_readv", "process_vm_writev", "kill", "setrlimit", "mount", "umount2",
      "pivot_root", "chroot", "unshare", "setns", "bpf", "perf_event_open", "keyctl", "add_key", "request_key",
      "io_uring_setup", "userfaultfd", "personality", "init_module", "finit_module", "kexec_load", "reboot",
      "swapon", "swapoff"};
  int status = 0;
  uint32_t eperm = AK_SCMP_ACT_ERRNO(EPERM);
  for (size_t i = 0; status == 0 && i < sizeof denied / sizeof denied[0]; i++) {
    int number = resolve(denied[i]);
    if (number < 0) continue;  // not a system call on this architecture (fork on arm64)
    status = add(filter, eperm, number, 0, NULL);
  }
  // A new process is a clone without CLONE_THREAD; threads stay allowed.
  struct scmp_arg_cmp no_thread = {.arg = 0, .op = AK_SCMP_CMP_MASKED_EQ, .datum_a = CLONE_THREAD, .datum_b = 0};
  if (status == 0) status = add(filter, eperm, resolve("clone"), 1, &no_thread);
  // clone3 passes its flags in memory a filter cannot read: ENOSYS makes glibc use clone.
  if (status == 0) status = add(filter, AK_SCMP_ACT_ERRNO(ENOSYS), resolve("clone3"), 0, NULL);
  // Limits may be read (prlimit64 with no new limit), not raised.
  struct scmp_arg_cmp new_limit = {.arg = 2, .op = AK_SCMP_CMP_NE, .datum_a = 0, .datum_b = 0};
  if (status == 0) status = add(filter, eperm, resolve("prlimit64"), 1, &new_limit);
  // Signals go to this process only (abort() and raise() use tgkill on themselves).
  struct scmp_arg_cmp other = {.arg = 0, .op = AK_SCMP_CMP_NE, .datum_a = (uint64_t)getpid(), .datum_b = 0};
  if (status == 0) status = add(filter, eperm, resolve("tgkill"), 1, &other);
  if (status == 0) status = load(filter);
  release(filter);
  return status;
}
