// Landlock for a rescue worker: no path of the file system is reachable but the job's own two
// files (its source read-only, its output read-write), which the worker holds as descriptors and
// its libraries open again as /proc/self/fd/N; no TCP; no signal to, and no abstract Unix socket
// of, any process outside the worker. Three system calls and <linux/landlock.h>, no library.
#define _GNU_SOURCE
#include "CWorkerIO.h"

#include <errno.h>
#include <linux/landlock.h>
#include <stdint.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef SYS_landlock_create_ruleset
#define SYS_landlock_create_ruleset 444
#define SYS_landlock_add_rule 445
#define SYS_landlock_restrict_self 446
#endif

int ak_landlock_abi(void) {
  long abi = syscall(SYS_landlock_create_ruleset, NULL, 0, LANDLOCK_CREATE_RULESET_VERSION);
  return abi < 0 ? -errno : (int)abi;
}

/// The file-system rights Landlock ABI `abi` knows, all handled (so all denied but by a rule).
static uint64_t ak_landlock_fs_rights(int abi) {
  uint64_t rights = (1ULL << 13) - 1;  // ABI 1: EXECUTE … MAKE_SYM
  if (abi >= 2) rights |= 1ULL << 13;  // REFER
  if (abi >= 3) rights |= 1ULL << 14;  // TRUNCATE
  if (abi >= 5) rights |= 1ULL << 15;  // IOCTL_DEV
  return rights;
}

/// The rights a regular file may be given in a rule: read; write and truncate for the output.
static uint64_t ak_landlock_file_rights(int abi, int writable) {
  uint64_t rights = 1ULL << 2;  // READ_FILE
  if (writable) {
    rights |= 1ULL << 1;               // WRITE_FILE
    if (abi >= 3) rights |= 1ULL << 14;  // TRUNCATE
  }
  return rights;
}

int ak_landlock_confine(int source_fd, int output_fd, int *abi_out) {
  int abi = ak_landlock_abi();
  *abi_out = abi;
  if (abi < 1) return abi < 0 ? abi : -EOPNOTSUPP;
  struct {
    uint64_t handled_access_fs;
    uint64_t handled_access_net;
    uint64_t scoped;
  } attributes = {.handled_access_fs = ak_landlock_fs_rights(abi)};
  size_t size = sizeof(uint64_t);
  if (abi >= 4) {
    attributes.handled_access_net = 3;  // BIND_TCP | CONNECT_TCP
    size = 2 * sizeof(uint64_t);
  }
  if (abi >= 6) {
    attributes.scoped = 3;  // ABSTRACT_UNIX_SOCKET | SIGNAL
    size = 3 * sizeof(uint64_t);
  }
  int ruleset = (int)syscall(SYS_landlock_create_ruleset, &attributes, size, 0);
  if (ruleset < 0) return -errno;
  int status = 0;
  int files[2] = {source_fd, output_fd};
  for (int index = 0; status == 0 && index < 2; index++) {
    if (files[index] < 0) continue;
    struct landlock_path_beneath_attr rule = {
        .allowed_access = ak_landlock_file_rights(abi, index == 1), .parent_fd = files[index]};
    if (syscall(SYS_landlock_add_rule, ruleset, LANDLOCK_RULE_PATH_BENEATH, &rule, 0) != 0) status = -errno;
  }
  if (status == 0 && prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) status = -errno;
  if (status == 0 && syscall(SYS_landlock_restrict_self, ruleset, 0) != 0) status = -errno;
  close(ruleset);
  return status;
}
