// readdir(3) for the test process, returning a copy of each entry in a buffer a whole `struct
// dirent` long and more.
//
// Foundation's Process.run() (swift-corelibs-foundation in Swift 6.3) lists /proc/self/fd to
// close every descriptor in the child, and copies each entry's `d_name` as the whole 256-byte
// array. glibc's readdir returns records only `d_reclen` long inside its own buffer, so the copy
// of the last record of a full buffer reads past its end; when the next page is not mapped, the
// test process dies (SIGSEGV in memmove under Process.run, seen in a CI run of the parallel
// suite with about 1,300 descriptors open; fixed upstream in swift-corelibs-foundation#5472,
// not in this toolchain). The test executable defines readdir, so Foundation's calls bind to
// this one (the linker exports a symbol of the executable that a shared library references);
// it calls glibc's and, for Foundation's calls, copies the record (d_reclen bytes) into a
// per-thread buffer of sizeof(struct dirent) + 256 bytes, which the over-read stays inside. (The
// toolchain is checked: `objdump -d libFoundation.so` still shows the 256-byte memcpy after
// readdir in findMaximumOpenFromProcSelfFD, as of Swift 6.3.1.)
//
// Only Foundation gets the copy: a call whose return address lies in libFoundation.so (its
// loaded segments, found once by dl_iterate_phdr) is copied; every other caller, the library and
// attachkit's code linked into the test executable among them, gets glibc's record itself, so
// that an over-read of a record in product code reads what it would in production.
//
// The copy lasts until this thread's next readdir call on any stream, where glibc's lasts until
// the next call on the same stream: Foundation keeps no entry across a call.
// Only the test bundle links this (through TestTraits): attachkit and the library never do.
#define _GNU_SOURCE
#include <dirent.h>
#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "CTestPreload.h"

typedef struct dirent *(*ak_readdir_function)(DIR *);

static _Thread_local union {
  struct dirent entry;
  char bytes[sizeof(struct dirent) + 256];
} ak_readdir_copy;

/// The lowest and highest address of libFoundation.so's loaded segments; both 0 until found.
static uintptr_t foundation_start = 0;
static uintptr_t foundation_end = 0;
static pthread_once_t foundation_found = PTHREAD_ONCE_INIT;

static int find_foundation(struct dl_phdr_info *info, size_t size, void *unused) {
  (void)size;
  (void)unused;
  const char *name = info->dlpi_name;
  size_t length = name == NULL ? 0 : strlen(name);
  static const char suffix[] = "/libFoundation.so";
  if (length < sizeof suffix - 1 || strcmp(name + length - (sizeof suffix - 1), suffix) != 0) return 0;
  for (int index = 0; index < info->dlpi_phnum; index++) {
    const ElfW(Phdr) *header = &info->dlpi_phdr[index];
    if (header->p_type != PT_LOAD) continue;
    uintptr_t start = info->dlpi_addr + header->p_vaddr;
    uintptr_t end = start + header->p_memsz;
    if (foundation_start == 0 || start < foundation_start) foundation_start = start;
    if (end > foundation_end) foundation_end = end;
  }
  return 1;
}

static void find_foundation_once(void) { dl_iterate_phdr(find_foundation, NULL); }

static int called_from_foundation(const void *caller) {
  pthread_once(&foundation_found, find_foundation_once);
  uintptr_t address = (uintptr_t)caller;
  return address >= foundation_start && address < foundation_end;
}

struct dirent *readdir(DIR *stream) {
  static ak_readdir_function real = NULL;
  if (real == NULL) {
    real = (ak_readdir_function)dlsym(RTLD_NEXT, "readdir");
    if (real == NULL) return NULL;
  }
  struct dirent *entry = real(stream);
  if (entry == NULL || !called_from_foundation(__builtin_return_address(0))) return entry;
  size_t length = entry->d_reclen;
  if (length > sizeof ak_readdir_copy.bytes) length = sizeof ak_readdir_copy.bytes;
  memset(ak_readdir_copy.bytes, 0, sizeof ak_readdir_copy.bytes);
  memcpy(ak_readdir_copy.bytes, entry, length);
  return &ak_readdir_copy.entry;
}

int ak_test_readdir_is_copy(const void *entry) { return entry == (const void *)&ak_readdir_copy.entry; }

int ak_test_readdir_copies_foundation(void) {
  pthread_once(&foundation_found, find_foundation_once);
  return foundation_end > foundation_start;
}
