#ifndef C_TEST_PRELOAD_H
#define C_TEST_PRELOAD_H

/// How many of the heavy libraries the test process loaded before its first test (see
/// preload.c).
int ak_test_preloaded_libraries(void);

#endif
