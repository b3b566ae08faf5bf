// Loads the heavy C libraries into the test process before main, while it has one thread.
//
// The library loads libvips (and the modules vips_init opens: heif, poppler, ImageMagick,
// JPEG XL, OpenSlide) and FFmpeg's libraries lazily, on first use. dlopen holds the dynamic
// loader's lock while it maps and binds them, and every pthread_create of the process waits
// for that lock (a new thread's TLS is set up under it). In a parallel test run the loading
// thread shares two cores with hundreds of others: binding that takes 0.5 s alone held the lock
// for seconds, and every test that started a thread meanwhile (a server connection, a
// background check, a curl engine) stalled. Loaded here, later dlopen calls only find them.
//
// Only the test bundle links this (through TestTraits): the command-line tests check what a
// real attachkit process maps, and the benchmarks measure the lazy loading they pay for.
#include <dirent.h>
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "CTestPreload.h"

static int loaded = 0;

static void load(const char *path) {
  if (dlopen(path, RTLD_NOW | RTLD_LOCAL) != NULL) loaded += 1;
}

static void load_directory(const char *directory) {
  DIR *listing = opendir(directory);
  if (listing == NULL) return;
  struct dirent *entry;
  while ((entry = readdir(listing)) != NULL) {
    size_t length = strlen(entry->d_name);
    if (length < 4 || strcmp(entry->d_name + length - 3, ".so") != 0) continue;
    char path[4096];
    if (snprintf(path, sizeof path, "%s/%s", directory, entry->d_name) < (int)sizeof path) load(path);
  }
  closedir(listing);
}

__attribute__((constructor)) static void ak_test_preload(void) {
  const char *libraries[] = {
    "libcurl.so.4", "libmagic.so.1", "libvips.so.42", "libavutil.so.57", "libavcodec.so.59",
    "libavformat.so.59", "libswscale.so.6", "libswresample.so.4",
  };
  for (size_t index = 0; index < sizeof libraries / sizeof libraries[0]; index++) load(libraries[index]);
  load_directory("/usr/lib/x86_64-linux-gnu/vips-modules-8.14");
}

int ak_test_preloaded_libraries(void) { return loaded; }
