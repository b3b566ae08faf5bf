// The system calls of a rescue worker and its parent that Swift cannot make cleanly: the spawn
// into namespaces (worker_spawn.c), descriptors passed over a Unix socket (SCM_RIGHTS) and
// per-process resource limits (worker_io.c), Landlock (worker_landlock.c), the seccomp
// allow-list (worker_seccomp.c; libseccomp is opened with dlopen in the worker only, so no other
// process maps it) and the sandbox's probes (worker_probes.c).
#ifndef ATTACHKIT_CWORKERIO_H
#define ATTACHKIT_CWORKERIO_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/// The descriptor number a worker finds its socket at.
#define AK_WORKER_SOCKET_FD 3

/// The sandbox layers a worker's spawn can put in place (``ak_spawn_request/layers``).
enum {
  /// A user namespace of its own (a root parent maps the unprivileged user into it; another
  /// parent maps nothing: its worker runs unmapped, as its own user outside).
  AK_LAYER_USER_NAMESPACE = 1 << 0,
  /// A PID namespace of its own: it sees no other process (it is its namespace's process 1).
  AK_LAYER_PID_NAMESPACE = 1 << 1,
  /// A network namespace of its own: no interface but a loopback that is down.
  AK_LAYER_NETWORK_NAMESPACE = 1 << 2,
  /// An IPC namespace of its own: no System V or POSIX message queue of anyone else's.
  AK_LAYER_IPC_NAMESPACE = 1 << 3,
  /// A mount namespace of its own.
  AK_LAYER_MOUNT_NAMESPACE = 1 << 4,
  /// A session of its own (`setsid`): no controlling terminal.
  AK_LAYER_SESSION = 1 << 5,
  /// An unprivileged user and group (``ak_spawn_request/uid``), with no supplementary group:
  /// a root parent's worker is not root.
  AK_LAYER_UNPRIVILEGED_USER = 1 << 6,
};

/// How to start a worker: its layers, and the user and group it runs as under
/// ``AK_LAYER_UNPRIVILEGED_USER``.
struct ak_spawn_request {
  unsigned layers;
  unsigned uid;
  unsigned gid;
};

/// The step of a worker's start that failed (``ak_spawn_worker``'s `failed_stage`).
enum {
  AK_SPAWN_STAGE_NONE = 0,
  /// clone with the namespaces (user namespaces refused, no privilege for the others).
  AK_SPAWN_STAGE_CLONE = 1,
  /// writing the user namespace's uid_map or gid_map.
  AK_SPAWN_STAGE_USER_MAP = 2,
  /// setgroups, setresgid or setresuid to the unprivileged user.
  AK_SPAWN_STAGE_IDENTITY = 3,
  /// setsid.
  AK_SPAWN_STAGE_SESSION = 4,
  /// placing the descriptors.
  AK_SPAWN_STAGE_DESCRIPTORS = 5,
  /// execve.
  AK_SPAWN_STAGE_EXEC = 6,
};

/// Starts `path` with `argv` (NULL-terminated) and `envp` in the layers `request` asks for, the
/// descriptor `socket_fd` as descriptor 3, standard input, output and error on /dev/null, every
/// other descriptor closed, an empty signal mask and default signal dispositions. Returns the
/// child's process id (as this process sees it), or -errno with the step that failed in
/// `failed_stage` (the child is then reaped).
pid_t ak_spawn_worker(const char *path, char *const argv[], char *const envp[], int socket_fd,
                      const struct ak_spawn_request *request, int *failed_stage);

/// A read-only copy of `source_fd`'s file (from its start) in a file no path names
/// (`O_TMPFILE` in `directory`, else in /tmp), owned by `owner` (user and group): the source an
/// unprivileged worker may read when the original is not readable by it. Returns the copy's
/// descriptor (close-on-exec, at offset 0), or -errno.
int ak_private_copy(int source_fd, const char *directory, unsigned owner);

/// Makes this process undumpable (`PR_SET_DUMPABLE` 0): no other process of its user can read or
/// write its memory (/proc/PID/mem, ptrace, process_vm_*) or take its descriptors (pidfd_getfd),
/// and it writes no core file. Returns 0, or -errno.
int ak_make_undumpable(void);

/// This process's `PR_GET_DUMPABLE` (0: undumpable).
int ak_is_dumpable(void);

/// The Landlock ABI version this kernel offers, or -errno (EOPNOTSUPP or ENOSYS: none).
int ak_landlock_abi(void);

/// Restricts the calling thread and every thread it starts afterwards (call it while the process
/// has one thread) with Landlock: every file-system access right of the kernel's ABI handled and
/// none granted but reading `source_fd`'s file and reading, writing and truncating
/// `output_fd`'s (-1: none), which the job's libraries open again as /proc/self/fd/N; TCP bind
/// and connect refused (ABI 4); signals to, and abstract Unix sockets of, processes outside the
/// domain refused (ABI 6). Sets `PR_SET_NO_NEW_PRIVS`. The ABI used goes to `abi`. Returns 0, or
/// -errno.
int ak_landlock_confine(int source_fd, int output_fd, int *abi);

/// Installs the worker's seccomp allow-list on every thread (TSYNC): any system call not on it
/// kills the process (SIGSYS); see worker_seccomp.c for the list and why each call is there.
/// `generated_code` (an image worker, whose libvips generates vector code with ORC) also allows
/// anonymous memory mapped executable. Returns 0; -ENOENT when libseccomp cannot be opened;
/// -errno when a step fails.
int ak_seccomp_allow_list(int generated_code);

/// Opens libseccomp (before Landlock shuts every path), so that ``ak_seccomp_allow_list`` finds
/// it loaded. Returns 0, or -ENOENT.
int ak_seccomp_preload(void);

/// What the sandbox's probes aim at: the parent (its process id as the parent sees it, the
/// address of a buffer of its, a descriptor only it holds), a file only the parent's user may
/// read, and a path in a directory anyone may write to.
struct ak_probe_target {
  int parent_pid;
  uint64_t parent_address;
  int parent_fd;
  const char *key_path;
  const char *write_path;
};

/// The probes (``ak_probe``).
enum {
  AK_PROBE_PARENT_MEMORY = 1,
  AK_PROBE_PARENT_DESCRIPTOR,
  AK_PROBE_KEY_FILE,
  AK_PROBE_SYSTEM_FILE,
  AK_PROBE_WRITE_FILE,
  AK_PROBE_SIGNAL_QUEUE,
  AK_PROBE_PIDFD_SIGNAL,
  AK_PROBE_KILL,
  AK_PROBE_TGKILL,
  AK_PROBE_TERMINAL,
  AK_PROBE_EXECUTE,
  AK_PROBE_PROCESS,
  AK_PROBE_SOCKET,
  AK_PROBE_CONNECT,
  AK_PROBE_PTRACE,
  AK_PROBE_PROCESS_MEMORY,
  AK_PROBE_UNSHARE,
  AK_PROBE_MOUNT,
  AK_PROBE_RAISE_LIMIT,
  AK_PROBE_THREAD_SOCKET,
  AK_PROBE_BPF,
  AK_PROBE_PERF_EVENT_OPEN,
  AK_PROBE_IO_URING,
  AK_PROBE_FSOPEN,
  AK_PROBE_OPEN_TREE,
  AK_PROBE_MOVE_MOUNT,
  AK_PROBE_OPEN_BY_HANDLE,
  AK_PROBE_DELETE_MODULE,
  AK_PROBE_KEXEC_FILE_LOAD,
  AK_PROBE_IOPL,
  AK_PROBE_EXECUTABLE_MEMORY,
};

/// A probe's outcome.
enum { AK_PROBE_BLOCKED = 0, AK_PROBE_ALLOWED = 1, AK_PROBE_UNKNOWN = 2 };

/// Tries `probe` against `target` from this (confined) process: ``AK_PROBE_ALLOWED`` when the
/// attack got through, ``AK_PROBE_BLOCKED`` with the errno it failed with in `error`. A step
/// the seccomp filter refuses does not return: the process is killed.
int ak_probe(int probe, const struct ak_probe_target *target, int *error);

/// Counts `signal_number` arriving at this process from now on (a handler that only counts),
/// so that a check can tell whether a probe reached it. Returns 0, or -errno.
int ak_signal_count_start(int signal_number);

/// Puts back the disposition ``ak_signal_count_start`` replaced; returns how many arrived.
long ak_signal_count_stop(int signal_number);

/// Makes `signal_number` end this process with exit status `status` (a worker is its PID
/// namespace's process 1, for which the kernel ignores a signal such as SIGXFSZ whose default
/// action would end it). Returns 0, or -errno.
int ak_exit_on_signal(int signal_number, int status);

/// Makes the parent's and the worker's ends of a worker socket: a Unix SOCK_SEQPACKET pair
/// (message boundaries kept, close-on-exec). Returns 0, or -errno.
int ak_worker_socketpair(int pair[2]);

/// Sends one datagram of `length` bytes with up to two descriptors (-1: none) as SCM_RIGHTS.
/// Returns 0, or -errno.
int ak_send_with_fds(int socket_fd, const void *bytes, size_t length, int fd1, int fd2);

/// Receives one datagram into `buffer` (at most `capacity` bytes) and up to two descriptors
/// (-1 where none came; received descriptors are close-on-exec). Returns the datagram's length
/// (0: the peer closed), or -errno; -EMSGSIZE when the datagram or its descriptors were cut.
ssize_t ak_receive_with_fds(int socket_fd, void *buffer, size_t capacity, int *fd1, int *fd2);

/// Sets the soft and hard limit of `resource` of process `pid` (0: this one). Returns 0 or -errno.
int ak_set_limit(pid_t pid, int resource, uint64_t soft, uint64_t hard);

/// The soft limit of `resource` of process `pid`; UINT64_MAX for none or on failure.
uint64_t ak_soft_limit(pid_t pid, int resource);

/// The hard limit of `resource` of process `pid`; UINT64_MAX for none or on failure.
uint64_t ak_hard_limit(pid_t pid, int resource);

/// Whether this process runs under AddressSanitizer or ThreadSanitizer (whose shadow memory is
/// address space an `RLIMIT_AS` ceiling would refuse).
int ak_under_sanitizer(void);

/// Names the calling thread (`PR_SET_NAME`: at most 15 bytes are kept), as `/proc/PID/task/*/comm`
/// and `top -H` show it. Returns 0, or -errno.
int ak_name_this_thread(const char *name);

/// The path of the shared library that holds `address` (`dladdr`'s file name), or NULL.
const char *ak_library_path(const void *address);

/// Keeps GLib's error, critical and warning messages (libvips' `VIPS-WARNING`s among them) in
/// this process's bounded list of library messages, and drops its chattier ones, instead of
/// writing any to standard error: `set_writer_func` is GLib's `g_log_set_writer_func` (GLib
/// allows it once per process; later calls do nothing). Returns 0, or -1 when it is NULL.
int ak_library_log_capture_glib(void *set_writer_func);

/// Keeps FFmpeg's messages of level warning and worse (each line prefixed with the name of
/// what logged it, `[h264]`) in the same list: `set_callback` is `av_log_set_callback`.
/// Returns 0, or -1 when it is NULL.
int ak_library_log_capture_av(void *set_callback);

/// Copies the kept messages into `buffer` (at most `size` bytes, NUL-terminated), each as
/// `library: text` and a newline, each once, at most 8 of them, then empties the list.
/// Returns how many more there were (dropped, or too long for `buffer`).
long ak_library_log_take(char *buffer, size_t size);

#endif
