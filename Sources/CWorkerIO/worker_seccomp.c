// The rescue worker's system-call allow-list (seccomp-BPF through libseccomp, which is opened
// with dlopen in the worker only). Default: the kernel kills the whole worker (its parent reads
// SIGSYS from the wait status). Allowed: what a decoding job needs once its libraries are loaded,
// found with `strace -f -c` over every sample and the fuzz corpus (docs/security.md lists each
// call and what it is for). Installed on every thread (TSYNC).
#define _GNU_SOURCE
#include "CWorkerIO.h"

#include <dlfcn.h>
#include <errno.h>
#include <sched.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <unistd.h>

// libseccomp's API (seccomp.h), declared here so the header is not needed to build.
typedef void *scmp_filter_ctx;
struct scmp_arg_cmp {
  unsigned int arg;
  int op;
  uint64_t datum_a;
  uint64_t datum_b;
};
#define AK_SCMP_ACT_KILL_PROCESS 0x80000000U
#define AK_SCMP_ACT_ALLOW 0x7fff0000U
#define AK_SCMP_ACT_ERRNO(x) (0x00050000U | ((x) & 0x0000ffffU))
#define AK_SCMP_FLTATR_CTL_TSYNC 4
enum { AK_SCMP_CMP_EQ = 4, AK_SCMP_CMP_MASKED_EQ = 7 };

/// Calls allowed with any arguments: each works on what the worker already holds (its
/// descriptors, its memory, its threads) or only reads the clock or its own state. Calls that
/// take a path are here because Landlock, not this filter, decides which paths (none but the
/// job's two files) are reachable.
static const char *const ak_allowed[] = {
    // descriptors the worker holds: its job's source and output, its socket
    "read", "readv", "pread64", "preadv", "preadv2", "write", "writev", "pwrite64", "pwritev", "pwritev2",
    "lseek", "close", "fstat", "fstatfs", "fcntl", "dup", "dup2", "dup3", "ftruncate", "fallocate", "fsync",
    "fdatasync", "poll", "ppoll", "epoll_create1", "epoll_ctl", "epoll_wait", "epoll_pwait", "eventfd2",
    "pipe2", "timerfd_create", "timerfd_settime", "timerfd_gettime", "epoll_pwait2", "eventfd",
    // paths (Landlock refuses every one but the job's files, opened again as /proc/self/fd/N)
    "openat", "open", "newfstatat", "stat", "lstat", "statx", "statfs", "access", "faccessat", "faccessat2",
    "readlink", "readlinkat", "getdents64",
    // memory (mmap and mprotect below: never executable)
    "munmap", "mremap", "madvise", "brk", "mlock", "munlock", "membarrier", "get_mempolicy", "set_mempolicy",
    "mincore",
    // threads of its own (clone below: threads only)
    "futex", "set_robust_list", "get_robust_list", "rseq", "set_tid_address", "exit", "exit_group", "gettid",
    "getpid", "getppid", "sched_yield", "sched_getaffinity", "sched_setaffinity", "sched_getparam",
    "umask", "sched_getscheduler", "sched_get_priority_min", "sched_get_priority_max", "getpriority", "restart_syscall",
    // its own signals (tgkill below: to itself only)
    "rt_sigreturn", "rt_sigprocmask", "rt_sigaction", "sigaltstack",
    // time and facts about itself
    "clock_gettime", "clock_getres", "clock_nanosleep", "nanosleep", "gettimeofday", "time", "getrandom",
    "uname", "sysinfo", "getrusage", "getrlimit", "getuid", "geteuid", "getgid", "getegid", "getresuid",
    "getresgid", "getgroups", "getcpu"};

typedef scmp_filter_ctx (*ak_seccomp_init_fn)(uint32_t);
typedef int (*ak_seccomp_rule_fn)(scmp_filter_ctx, uint32_t, int, unsigned int, const struct scmp_arg_cmp *);
typedef int (*ak_seccomp_resolve_fn)(const char *);
typedef int (*ak_seccomp_attr_fn)(scmp_filter_ctx, int, uint32_t);
typedef int (*ak_seccomp_load_fn)(scmp_filter_ctx);
typedef void (*ak_seccomp_release_fn)(scmp_filter_ctx);

struct ak_seccomp {
  ak_seccomp_rule_fn add;
  ak_seccomp_resolve_fn resolve;
  scmp_filter_ctx filter;
};

/// Adds a rule for `name` (skipped when the architecture has no such call); 0 or -errno.
static int ak_rule(struct ak_seccomp *s, uint32_t action, const char *name, unsigned count,
                   const struct scmp_arg_cmp *args) {
  int number = s->resolve(name);
  if (number < 0) return 0;
  return s->add(s->filter, action, number, count, args);
}

int ak_seccomp_allow_list(int generated_code) {
  void *library = dlopen("libseccomp.so.2", RTLD_NOW | RTLD_LOCAL);
  if (library == NULL) return -ENOENT;
  ak_seccomp_init_fn init = (ak_seccomp_init_fn)dlsym(library, "seccomp_init");
  ak_seccomp_attr_fn attr = (ak_seccomp_attr_fn)dlsym(library, "seccomp_attr_set");
  ak_seccomp_load_fn load = (ak_seccomp_load_fn)dlsym(library, "seccomp_load");
  ak_seccomp_release_fn release = (ak_seccomp_release_fn)dlsym(library, "seccomp_release");
  struct ak_seccomp s = {
      .add = (ak_seccomp_rule_fn)dlsym(library, "seccomp_rule_add_array"),
      .resolve = (ak_seccomp_resolve_fn)dlsym(library, "seccomp_syscall_resolve_name")};
  if (!init || !attr || !load || !release || !s.add || !s.resolve) return -ENOENT;
  s.filter = init(AK_SCMP_ACT_KILL_PROCESS);
  if (s.filter == NULL) return -ENOMEM;
  int status = attr(s.filter, AK_SCMP_FLTATR_CTL_TSYNC, 1);
  for (size_t i = 0; status == 0 && i < sizeof ak_allowed / sizeof ak_allowed[0]; i++) {
    status = ak_rule(&s, AK_SCMP_ACT_ALLOW, ak_allowed[i], 0, NULL);
  }
  // Memory that is never executable, and no page made executable later (mprotect): FFmpeg
  // generates no code once loaded, so its worker's attacker cannot map code of its own. An image
  // worker (`generated_code`) may also map anonymous memory executable, as libvips' ORC does for
  // the vector code it generates (a third of a large downscale's time); never a file's bytes.
  struct scmp_arg_cmp not_executable = {.arg = 2, .op = AK_SCMP_CMP_MASKED_EQ, .datum_a = PROT_EXEC, .datum_b = 0};
  if (status == 0) status = ak_rule(&s, AK_SCMP_ACT_ALLOW, "mmap", 1, &not_executable);
  if (status == 0) status = ak_rule(&s, AK_SCMP_ACT_ALLOW, "mprotect", 1, &not_executable);
  struct scmp_arg_cmp anonymous = {.arg = 3, .op = AK_SCMP_CMP_MASKED_EQ, .datum_a = MAP_ANONYMOUS, .datum_b = MAP_ANONYMOUS};
  if (status == 0 && generated_code) status = ak_rule(&s, AK_SCMP_ACT_ALLOW, "mmap", 1, &anonymous);
  // Threads, never processes: clone only with CLONE_THREAD; clone3 passes its flags in memory a
  // filter cannot read, so it fails with ENOSYS and glibc uses clone.
  struct scmp_arg_cmp thread = {.arg = 0, .op = AK_SCMP_CMP_MASKED_EQ, .datum_a = CLONE_THREAD, .datum_b = CLONE_THREAD};
  if (status == 0) status = ak_rule(&s, AK_SCMP_ACT_ALLOW, "clone", 1, &thread);
  if (status == 0) status = ak_rule(&s, AK_SCMP_ACT_ERRNO(ENOSYS), "clone3", 0, NULL);
  // Signals to itself only (abort and raise use tgkill on their own process).
  struct scmp_arg_cmp itself = {.arg = 0, .op = AK_SCMP_CMP_EQ, .datum_a = (uint64_t)getpid(), .datum_b = 0};
  if (status == 0) status = ak_rule(&s, AK_SCMP_ACT_ALLOW, "tgkill", 1, &itself);
  // Its own socket only (descriptors arrive by SCM_RIGHTS on it).
  struct scmp_arg_cmp own_socket = {.arg = 0, .op = AK_SCMP_CMP_EQ, .datum_a = AK_WORKER_SOCKET_FD, .datum_b = 0};
  if (status == 0) status = ak_rule(&s, AK_SCMP_ACT_ALLOW, "recvmsg", 1, &own_socket);
  if (status == 0) status = ak_rule(&s, AK_SCMP_ACT_ALLOW, "sendmsg", 1, &own_socket);
  // Limits read, never set (prlimit64 with no new limit).
  struct scmp_arg_cmp read_only = {.arg = 2, .op = AK_SCMP_CMP_EQ, .datum_a = 0, .datum_b = 0};
  if (status == 0) status = ak_rule(&s, AK_SCMP_ACT_ALLOW, "prlimit64", 1, &read_only);
  // prctl: naming a thread and reading its name only.
  static const uint64_t prctl_options[] = {PR_SET_NAME, PR_GET_NAME, PR_GET_DUMPABLE};
  for (size_t i = 0; status == 0 && i < sizeof prctl_options / sizeof prctl_options[0]; i++) {
    struct scmp_arg_cmp option = {.arg = 0, .op = AK_SCMP_CMP_EQ, .datum_a = prctl_options[i], .datum_b = 0};
    status = ak_rule(&s, AK_SCMP_ACT_ALLOW, "prctl", 1, &option);
  }
  // socket: refused with EACCES rather than a kill, since glibc's syslog (which a library may
  // call on a warning) opens one: the library carries on, and no socket is ever made.
  if (status == 0) status = ak_rule(&s, AK_SCMP_ACT_ERRNO(EACCES), "socket", 0, NULL);
  // setpriority of the calling thread only (libdispatch lowers its worker threads' priority).
  struct scmp_arg_cmp this_thread[2] = {{.arg = 0, .op = AK_SCMP_CMP_EQ, .datum_a = PRIO_PROCESS, .datum_b = 0},
                                        {.arg = 1, .op = AK_SCMP_CMP_EQ, .datum_a = 0, .datum_b = 0}};
  if (status == 0) status = ak_rule(&s, AK_SCMP_ACT_ALLOW, "setpriority", 2, this_thread);
  // ioctl: none, but the terminal question isatty() asks, answered "not a terminal" (so no
  // TIOCSTI, and no request reaches a driver).
  struct scmp_arg_cmp terminal_query = {.arg = 1, .op = AK_SCMP_CMP_EQ, .datum_a = TCGETS, .datum_b = 0};
  if (status == 0) status = ak_rule(&s, AK_SCMP_ACT_ERRNO(ENOTTY), "ioctl", 1, &terminal_query);
  if (status == 0) status = load(s.filter);
  release(s.filter);
  return status;
}

int ak_seccomp_preload(void) { return dlopen("libseccomp.so.2", RTLD_NOW | RTLD_LOCAL) != NULL ? 0 : -ENOENT; }
