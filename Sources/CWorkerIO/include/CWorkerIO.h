// The system calls of a rescue worker and its parent that Swift cannot make cleanly:
// posix_spawn with a descriptor placed at 3 and every other one closed, descriptors passed over a
// Unix socket (SCM_RIGHTS), per-process resource limits, and the worker's seccomp filter
// (libseccomp, opened with dlopen in the worker only, so no other process maps it).
#ifndef ATTACHKIT_CWORKERIO_H
#define ATTACHKIT_CWORKERIO_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/// The descriptor number a worker finds its socket at.
#define AK_WORKER_SOCKET_FD 3

/// Starts `path` with `argv` (NULL-terminated) and `envp`, the descriptor `socket_fd` as
/// descriptor 3, standard input, output and error on /dev/null, every descriptor above 3
/// closed, an empty signal mask and default signal dispositions. Returns the child's process
/// id, or -errno.
pid_t ak_spawn_worker(const char *path, char *const argv[], char *const envp[], int socket_fd);

/// Makes the parent's and the worker's ends of a worker socket: a Unix SOCK_SEQPACKET pair
/// (message boundaries kept, close-on-exec). Returns 0, or -errno.
int ak_worker_socketpair(int pair[2]);

/// Tries to open a TCP socket (and closes it): 0 when it opened, or the errno it failed with
/// (a worker's self-check of its filter).
int ak_try_network_socket(void);

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

/// Confines the calling process (the worker, after its set-up): `PR_SET_NO_NEW_PRIVS`, then a
/// seccomp filter that allows every system call but these, which fail with EPERM: creating a
/// socket or using one to reach anything (socket, socketpair, connect, bind, listen, accept,
/// accept4), starting a program or a process (execve, execveat, fork, vfork, clone without
/// CLONE_THREAD; clone3 fails with ENOSYS so glibc falls back to clone), touching other
/// processes (ptrace, process_vm_readv/writev, kill, tkill, tgkill of another process), raising its
/// limits (setrlimit, prlimit64 with a new limit), and the kernel's administrative surface
/// (mount, umount2, pivot_root, chroot, unshare, setns, bpf, perf_event_open, keyctl, add_key,
/// request_key, io_uring_setup, userfaultfd, personality, init_module, finit_module,
/// kexec_load, reboot, swapon, swapoff). Returns 0; -ENOENT when libseccomp cannot be opened;
/// -errno when a step fails.
int ak_worker_confine(void);

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
