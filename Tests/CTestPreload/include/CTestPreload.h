#ifndef C_TEST_PRELOAD_H
#define C_TEST_PRELOAD_H

/// How many of the heavy libraries the test process loaded before its first test (see
/// preload.c).
int ak_test_preloaded_libraries(void);

/// Whether `entry`, returned by readdir, is this thread's padded copy (Foundation's calls) rather
/// than glibc's own record (every other caller): see readdir_copy.c.
int ak_test_readdir_is_copy(const void *entry);

/// Whether readdir found libFoundation.so's segments, the only caller whose records it copies.
int ak_test_readdir_copies_foundation(void);

#endif
