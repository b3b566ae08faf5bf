// Starting a rescue worker: a child in namespaces of its own (user, PID, network, IPC, mount), a
// session of its own, as an unprivileged user when the parent is root, with its socket as
// descriptor 3 and nothing else of its parent's. bubblewrap's set-up, in the few steps a worker
// needs: clone with the namespace flags, the parent writes the user namespace's maps, the child
// drops its identity and executes the worker. Between clone and execve the child makes raw system
// calls only (it is a copy of a threaded process: no allocation, no lock, no glibc wrapper that
// touches other threads, as setuid's does).
#define _GNU_SOURCE
#include "CWorkerIO.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef CLONE_NEWUSER
#define CLONE_NEWUSER 0x10000000
#endif

/// What the child reports through its error pipe when a step fails: the step and its errno.
struct ak_spawn_report {
  int stage;
  int error;
};

static void ak_child_fail(int pipe_fd, int stage) {
  struct ak_spawn_report report = {.stage = stage, .error = errno};
  (void)!write(pipe_fd, &report, sizeof report);
  syscall(SYS_exit_group, 127);
}

/// Writes `text` into /proc/`pid`/`name`; 0 or -errno.
static int ak_write_proc(pid_t pid, const char *name, const char *text) {
  char path[64];
  snprintf(path, sizeof path, "/proc/%d/%s", (int)pid, name);
  int fd = open(path, O_WRONLY | O_CLOEXEC);
  if (fd < 0) return -errno;
  ssize_t length = (ssize_t)strlen(text);
  ssize_t written = write(fd, text, (size_t)length);
  int error = written == length ? 0 : (written < 0 ? -errno : -EIO);
  close(fd);
  return error;
}

pid_t ak_spawn_worker(const char *path, char *const argv[], char *const envp[], int socket_fd,
                      const struct ak_spawn_request *request, int *failed_stage) {
  *failed_stage = AK_SPAWN_STAGE_NONE;
  // The executable is opened here, as the parent: a root parent's child executes it as the
  // unprivileged user, who may not be able to reach its path (a program under /root or a
  // mode-700 build directory) but may execute the file itself. -1: execute by path.
  int exe_fd = open(path, O_PATH | O_CLOEXEC);
  int go[2], report[2];
  if (pipe2(go, O_CLOEXEC) != 0) {
    int error = errno;
    if (exe_fd >= 0) close(exe_fd);
    return -error;
  }
  if (pipe2(report, O_CLOEXEC) != 0) {
    int error = errno;
    close(go[0]);
    close(go[1]);
    if (exe_fd >= 0) close(exe_fd);
    return -error;
  }
  unsigned long flags = SIGCHLD;
  if (request->layers & AK_LAYER_USER_NAMESPACE) flags |= CLONE_NEWUSER;
  if (request->layers & AK_LAYER_PID_NAMESPACE) flags |= CLONE_NEWPID;
  if (request->layers & AK_LAYER_NETWORK_NAMESPACE) flags |= CLONE_NEWNET;
  if (request->layers & AK_LAYER_IPC_NAMESPACE) flags |= CLONE_NEWIPC;
  if (request->layers & AK_LAYER_MOUNT_NAMESPACE) flags |= CLONE_NEWNS;
  // fork's semantics (no stack given: the child runs on a copy of this one), with namespaces.
  long pid = syscall(SYS_clone, flags, NULL, NULL, NULL, 0);
  if (pid < 0) {
    int error = errno;
    close(go[0]), close(go[1]), close(report[0]), close(report[1]);
    if (exe_fd >= 0) close(exe_fd);
    *failed_stage = AK_SPAWN_STAGE_CLONE;
    return -error;
  }
  if (pid == 0) {
    // The child: wait until the parent has written the user namespace's maps.
    char byte = 0;
    ssize_t got;
    do {
      got = syscall(SYS_read, go[0], &byte, 1);
    } while (got < 0 && errno == EINTR);
    if (got != 1 || byte != 'g') syscall(SYS_exit_group, 127);
    if (request->layers & AK_LAYER_UNPRIVILEGED_USER) {
      // root's supplementary groups go first (they would open group-0 files), then its ids.
      if (syscall(SYS_setgroups, 0, NULL) != 0) ak_child_fail(report[1], AK_SPAWN_STAGE_IDENTITY);
      if (syscall(SYS_setresgid, request->gid, request->gid, request->gid) != 0 ||
          syscall(SYS_setresuid, request->uid, request->uid, request->uid) != 0)
        ak_child_fail(report[1], AK_SPAWN_STAGE_IDENTITY);
    }
    if ((request->layers & AK_LAYER_SESSION) && syscall(SYS_setsid) < 0)
      ak_child_fail(report[1], AK_SPAWN_STAGE_SESSION);
    // Standard input, output and error on /dev/null, the socket at 3, nothing else open.
    int null_fd = (int)syscall(SYS_openat, AT_FDCWD, "/dev/null", O_RDWR, 0);
    if (null_fd < 0) ak_child_fail(report[1], AK_SPAWN_STAGE_DESCRIPTORS);
    int socket_copy = socket_fd;
    if (socket_copy <= 2 || socket_copy == AK_WORKER_SOCKET_FD) {
      socket_copy = (int)syscall(SYS_fcntl, socket_fd, F_DUPFD_CLOEXEC, 10);
      if (socket_copy < 0) ak_child_fail(report[1], AK_SPAWN_STAGE_DESCRIPTORS);
    }
    int report_fd = report[1];
    if (report_fd <= AK_WORKER_SOCKET_FD) {
      report_fd = (int)syscall(SYS_fcntl, report[1], F_DUPFD_CLOEXEC, 10);
      if (report_fd < 0) syscall(SYS_exit_group, 127);
    }
    for (int fd = 0; fd <= 2; fd++) {
      if (syscall(SYS_dup2, null_fd, fd) < 0) ak_child_fail(report_fd, AK_SPAWN_STAGE_DESCRIPTORS);
    }
    if (syscall(SYS_dup2, socket_copy, AK_WORKER_SOCKET_FD) < 0)
      ak_child_fail(report_fd, AK_SPAWN_STAGE_DESCRIPTORS);
    // The executable's descriptor above the report pipe (close-on-exec, as the pipe is).
    int exe_copy = -1;
    if (exe_fd >= 0) {
      exe_copy = (int)syscall(SYS_fcntl, exe_fd, F_DUPFD_CLOEXEC, report_fd + 1);
      if (exe_copy < 0) ak_child_fail(report_fd, AK_SPAWN_STAGE_DESCRIPTORS);
    }
    int last_kept = exe_copy > report_fd ? exe_copy : report_fd;
    // Every descriptor above 3 closed but those two (execve closes them).
    for (int fd = AK_WORKER_SOCKET_FD + 1; fd < last_kept; fd++) {
      if (fd != report_fd) syscall(SYS_close, fd);
    }
    syscall(SYS_close_range, (unsigned)last_kept + 1, ~0U, 0);
    // An empty signal mask and default dispositions (sigprocmask and sigaction are
    // async-signal-safe: they touch this thread only).
    sigset_t empty;
    sigemptyset(&empty);
    sigprocmask(SIG_SETMASK, &empty, NULL);
    struct sigaction default_action;
    memset(&default_action, 0, sizeof default_action);
    default_action.sa_handler = SIG_DFL;
    for (int signal_number = 1; signal_number < NSIG; signal_number++) {
      if (signal_number != SIGKILL && signal_number != SIGSTOP) sigaction(signal_number, &default_action, NULL);
    }
    if (exe_copy >= 0) {
      syscall(SYS_execveat, exe_copy, "", argv, envp, AT_EMPTY_PATH);
    } else {
      syscall(SYS_execve, path, argv, envp);
    }
    ak_child_fail(report_fd, AK_SPAWN_STAGE_EXEC);
  }
  if (exe_fd >= 0) close(exe_fd);
  close(go[0]);
  close(report[1]);
  int error = 0;
  if ((request->layers & AK_LAYER_USER_NAMESPACE) && (request->layers & AK_LAYER_UNPRIVILEGED_USER)) {
    // A root parent maps the unprivileged user and group (and nothing else) into the worker's
    // namespace, so that the child can become them. A parent of another user writes no map: it
    // could not (it is undumpable, so its child's /proc files belong to root until the child
    // executes), and needs none: its worker runs as its own user, unmapped inside (the
    // overflow id), without capabilities once it executes.
    char uid_map[64], gid_map[64];
    snprintf(uid_map, sizeof uid_map, "%u %u 1\n", request->uid, request->uid);
    snprintf(gid_map, sizeof gid_map, "%u %u 1\n", request->gid, request->gid);
    error = ak_write_proc((pid_t)pid, "gid_map", gid_map);
    if (error == 0) error = ak_write_proc((pid_t)pid, "uid_map", uid_map);
    if (error != 0) *failed_stage = AK_SPAWN_STAGE_USER_MAP;
  }
  if (error == 0) {
    ssize_t sent;
    do {
      sent = write(go[1], "g", 1);
    } while (sent < 0 && errno == EINTR);
    if (sent != 1) error = -EPIPE;
  }
  close(go[1]);
  if (error == 0) {
    struct ak_spawn_report child_report;
    ssize_t got;
    do {
      got = read(report[0], &child_report, sizeof child_report);
    } while (got < 0 && errno == EINTR);
    if (got == (ssize_t)sizeof child_report) {
      *failed_stage = child_report.stage;
      error = -child_report.error;
      if (error == 0) error = -EIO;
    }
  }
  close(report[0]);
  if (error != 0) {
    kill((pid_t)pid, SIGKILL);
    int status;
    while (waitpid((pid_t)pid, &status, 0) < 0 && errno == EINTR) {
    }
    return error;
  }
  return (pid_t)pid;
}

int ak_make_undumpable(void) { return prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) == 0 ? 0 : -errno; }

int ak_is_dumpable(void) { return prctl(PR_GET_DUMPABLE, 0, 0, 0, 0); }

int ak_private_copy(int source_fd, const char *directory, unsigned owner) {
  int copy = open(directory, O_TMPFILE | O_RDWR | O_CLOEXEC, 0400);
  if (copy < 0) copy = open("/tmp", O_TMPFILE | O_RDWR | O_CLOEXEC, 0400);
  if (copy < 0) return -errno;
  loff_t offset = 0;
  for (;;) {
    ssize_t moved = copy_file_range(source_fd, &offset, copy, NULL, 8 << 20, 0);
    if (moved == 0) break;
    if (moved > 0) continue;
    if (errno == EINTR) continue;
    // (file systems without copy_file_range between these two files)
    char buffer[65536];
    ssize_t got = pread(source_fd, buffer, sizeof buffer, offset);
    if (got == 0) break;
    if (got < 0 || write(copy, buffer, (size_t)got) != got) {
      int error = got < 0 ? errno : EIO;
      close(copy);
      return -error;
    }
    offset += got;
  }
  if (fchown(copy, owner, owner) != 0 || lseek(copy, 0, SEEK_SET) != 0) {
    int error = errno;
    close(copy);
    return -error;
  }
  return copy;
}
