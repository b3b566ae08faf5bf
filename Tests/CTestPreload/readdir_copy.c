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
// it calls glibc's and copies the record (d_reclen bytes) into a per-thread buffer of
// sizeof(struct dirent) + 256 bytes, which the over-read stays inside.
//
// The copy lasts until this thread's next readdir call on any stream, where glibc's lasts until
// the next call on the same stream: nothing in this project keeps an entry across a call.
// Only the test bundle links this (through TestTraits): attachkit and the library never do.
#define _GNU_SOURCE
#include <dirent.h>
#include <dlfcn.h>
#include <stddef.h>
#include <string.h>

typedef struct dirent *(*ak_readdir_function)(DIR *);

static _Thread_local union {
  struct dirent entry;
  char bytes[sizeof(struct dirent) + 256];
} ak_readdir_copy;

struct dirent *readdir(DIR *stream) {
  static ak_readdir_function real = NULL;
  if (real == NULL) {
    real = (ak_readdir_function)dlsym(RTLD_NEXT, "readdir");
    if (real == NULL) return NULL;
  }
  struct dirent *entry = real(stream);
  if (entry == NULL) return NULL;
  size_t length = entry->d_reclen;
  if (length > sizeof ak_readdir_copy.bytes) length = sizeof ak_readdir_copy.bytes;
  memset(ak_readdir_copy.bytes, 0, sizeof ak_readdir_copy.bytes);
  memcpy(ak_readdir_copy.bytes, entry, length);
  return &ak_readdir_copy.entry;
}
