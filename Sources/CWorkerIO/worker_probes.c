// The sandbox's probes: each tries, from inside a confined worker, one step an attacker with code
// execution in a decoder would take (`attachkit sandbox` runs every one, each in a worker of its
// own started as a rescue's is). A step the seccomp filter refuses kills the worker: its parent
// reads that as blocked. A step that returns reports whether the attack got through.
#define _GNU_SOURCE
#include "CWorkerIO.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <netinet/in.h>
#include <unistd.h>

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif
#ifndef SYS_pidfd_send_signal
#define SYS_pidfd_send_signal 424
#endif
#ifndef SYS_pidfd_getfd
#define SYS_pidfd_getfd 438
#endif

/// `allowed` when the step succeeded; otherwise blocked, with errno.
static int ak_outcome(int succeeded, int *error) {
  *error = succeeded ? 0 : errno;
  return succeeded ? AK_PROBE_ALLOWED : AK_PROBE_BLOCKED;
}

static void *ak_probe_thread(void *argument) {
  int *result = argument;
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  *result = fd;
  if (fd >= 0) close(fd);
  return NULL;
}

/// A raw system call with harmless arguments: allowed when it returned 0 or more.
static int ak_raw(long number, int *error) {
  long result = syscall(number, 0, 0, 0, 0, 0, 0);
  return ak_outcome(result >= 0, error);
}

int ak_probe(int probe, const struct ak_probe_target *target, int *error) {
  *error = 0;
  pid_t parent = target->parent_pid;
  switch (probe) {
    case AK_PROBE_PARENT_MEMORY: {
      char path[64];
      snprintf(path, sizeof path, "/proc/%d/mem", (int)parent);
      int fd = open(path, O_RDWR | O_CLOEXEC);
      if (fd < 0) return ak_outcome(0, error);
      static const char text[] = "OVERWRITTEN-BY-WORKER";
      ssize_t written = pwrite(fd, text, sizeof text - 1, (off_t)target->parent_address);
      int saved = errno;
      close(fd);
      errno = saved;
      return ak_outcome(written > 0, error);
    }
    case AK_PROBE_PARENT_DESCRIPTOR: {
      int pidfd = (int)syscall(SYS_pidfd_open, parent, 0);
      if (pidfd < 0) return ak_outcome(0, error);
      int fd = (int)syscall(SYS_pidfd_getfd, pidfd, target->parent_fd, 0);
      return ak_outcome(fd >= 0, error);
    }
    case AK_PROBE_KEY_FILE:
    case AK_PROBE_SYSTEM_FILE: {
      const char *path = probe == AK_PROBE_KEY_FILE ? target->key_path : "/etc/passwd";
      int fd = open(path, O_RDONLY | O_CLOEXEC);
      if (fd < 0) return ak_outcome(0, error);
      char byte;
      ssize_t got = read(fd, &byte, 1);
      close(fd);
      return ak_outcome(got == 1, error);
    }
    case AK_PROBE_WRITE_FILE: {
      int fd = open(target->write_path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
      if (fd < 0) return ak_outcome(0, error);
      ssize_t written = write(fd, "x", 1);
      close(fd);
      return ak_outcome(written == 1, error);
    }
    case AK_PROBE_SIGNAL_QUEUE: {
      siginfo_t info;
      memset(&info, 0, sizeof info);
      info.si_signo = SIGUSR1;
      info.si_code = SI_QUEUE;
      return ak_outcome(syscall(SYS_rt_sigqueueinfo, parent, SIGUSR1, &info) == 0, error);
    }
    case AK_PROBE_PIDFD_SIGNAL: {
      int pidfd = (int)syscall(SYS_pidfd_open, parent, 0);
      if (pidfd < 0) return ak_outcome(0, error);
      return ak_outcome(syscall(SYS_pidfd_send_signal, pidfd, SIGUSR2, NULL, 0) == 0, error);
    }
    case AK_PROBE_KILL: return ak_outcome(kill(parent, SIGUSR1) == 0, error);
    case AK_PROBE_TGKILL: return ak_outcome(syscall(SYS_tgkill, parent, parent, SIGUSR1) == 0, error);
    case AK_PROBE_TERMINAL: {
      char byte = '#';
      int injected = 0;
      int fd = open("/dev/tty", O_RDWR | O_CLOEXEC);
      if (fd >= 0) {
        injected = ioctl(fd, TIOCSTI, &byte) == 0;
        close(fd);
      }
      for (int standard = 0; !injected && standard <= 2; standard++) injected = ioctl(standard, TIOCSTI, &byte) == 0;
      return ak_outcome(injected, error);
    }
    case AK_PROBE_EXECUTE: {
      char *const argv[] = {"/bin/true", NULL};
      char *const envp[] = {NULL};
      execve("/bin/true", argv, envp);
      return ak_outcome(0, error);
    }
    case AK_PROBE_PROCESS: {
      long child = syscall(SYS_clone, SIGCHLD, 0, 0, 0, 0);
      if (child == 0) syscall(SYS_exit_group, 0);
      if (child > 0) waitpid((pid_t)child, NULL, 0);
      return ak_outcome(child > 0, error);
    }
    case AK_PROBE_SOCKET: {
      int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
      if (fd >= 0) close(fd);
      return ak_outcome(fd >= 0, error);
    }
    case AK_PROBE_CONNECT: {
      // (through the socket it holds, the only one it has)
      struct sockaddr_in address = {.sin_family = AF_INET, .sin_port = htons(9)};
      address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
      return ak_outcome(connect(AK_WORKER_SOCKET_FD, (struct sockaddr *)&address, sizeof address) == 0, error);
    }
    case AK_PROBE_PTRACE: return ak_outcome(ptrace(PTRACE_ATTACH, parent, NULL, NULL) == 0, error);
    case AK_PROBE_PROCESS_MEMORY: {
      char text[] = "OVERWRITTEN-BY-WORKER";
      struct iovec local = {.iov_base = text, .iov_len = sizeof text - 1};
      struct iovec remote = {.iov_base = (void *)(uintptr_t)target->parent_address, .iov_len = sizeof text - 1};
      return ak_outcome(process_vm_writev(parent, &local, 1, &remote, 1, 0) > 0, error);
    }
    case AK_PROBE_UNSHARE: return ak_outcome(unshare(CLONE_NEWUSER) == 0, error);
    case AK_PROBE_MOUNT: return ak_outcome(mount("none", "/tmp", "tmpfs", 0, NULL) == 0, error);
    case AK_PROBE_RAISE_LIMIT: {
      struct rlimit limit = {.rlim_cur = RLIM_INFINITY, .rlim_max = RLIM_INFINITY};
      return ak_outcome(setrlimit(RLIMIT_CPU, &limit) == 0, error);
    }
    case AK_PROBE_THREAD_SOCKET: {
      int result = -1;
      pthread_t thread;
      if (pthread_create(&thread, NULL, ak_probe_thread, &result) != 0) return ak_outcome(0, error);
      pthread_join(thread, NULL);
      errno = EPERM;
      return ak_outcome(result >= 0, error);
    }
    case AK_PROBE_BPF: return ak_raw(SYS_bpf, error);
    case AK_PROBE_PERF_EVENT_OPEN: return ak_raw(SYS_perf_event_open, error);
    case AK_PROBE_IO_URING: return ak_raw(425, error);
    case AK_PROBE_FSOPEN: return ak_raw(430, error);
    case AK_PROBE_OPEN_TREE: return ak_raw(428, error);
    case AK_PROBE_MOVE_MOUNT: return ak_raw(429, error);
    case AK_PROBE_OPEN_BY_HANDLE: return ak_raw(SYS_open_by_handle_at, error);
    case AK_PROBE_DELETE_MODULE: return ak_raw(SYS_delete_module, error);
    case AK_PROBE_KEXEC_FILE_LOAD:
#ifdef SYS_kexec_file_load
      return ak_raw(SYS_kexec_file_load, error);
#else
      errno = ENOSYS;
      return ak_outcome(0, error);
#endif
    case AK_PROBE_IOPL:
#ifdef SYS_iopl
      return ak_raw(SYS_iopl, error);
#else
      errno = ENOSYS;
      return ak_outcome(0, error);
#endif
    case AK_PROBE_EXECUTABLE_MEMORY: {
      void *page = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
      return ak_outcome(page != MAP_FAILED, error);
    }
    default: errno = EINVAL; return AK_PROBE_UNKNOWN;
  }
}

static volatile sig_atomic_t ak_signals_seen[NSIG];
static struct sigaction ak_signal_previous[NSIG];

static void ak_count_signal(int signal_number) {
  if (signal_number > 0 && signal_number < NSIG) ak_signals_seen[signal_number]++;
}

int ak_signal_count_start(int signal_number) {
  if (signal_number <= 0 || signal_number >= NSIG) return -EINVAL;
  ak_signals_seen[signal_number] = 0;
  struct sigaction action;
  memset(&action, 0, sizeof action);
  action.sa_handler = ak_count_signal;
  return sigaction(signal_number, &action, &ak_signal_previous[signal_number]) == 0 ? 0 : -errno;
}

long ak_signal_count_stop(int signal_number) {
  if (signal_number <= 0 || signal_number >= NSIG) return -EINVAL;
  sigaction(signal_number, &ak_signal_previous[signal_number], NULL);
  return ak_signals_seen[signal_number];
}
