/*
 * bench.c: LMDB against SQLite as the store of AttachmentKit's per-URL records.
 * Built and driven by scripts/bench-record-stores.sh, which compiles it into a temporary
 * directory (see Benchmarks/record-stores/README.md; excluded from the Swift target).
 *
 *   bench versions
 *   bench noop                                     exits at once (the fresh-process baseline)
 *   bench prepare      lmdb|sqlite PATH N          a fresh store holding records 0..N-1
 *   bench hit          lmdb|sqlite PATH N LOOKUPS  open once, LOOKUPS timed random lookups
 *   bench hit-once     lmdb|sqlite PATH INDEX      open, one lookup, close, exit
 *   bench batch        lmdb|sqlite PATH PROCS COUNT  PROCS processes, COUNT inserts each
 *   bench churn        lmdb|sqlite PATH HELD STEPS   insert one + delete the oldest, STEPS times
 *   bench crash-writer lmdb|sqlite PATH          a writer killed with SIGKILL before commit
 *
 * Results are "name value" lines on standard output. Every library call is checked: a failure,
 * or a wrong answer, ends the program with status 2 and a message (nothing is timed after it).
 * Build with -DWITH_SQLITE=0 or -DWITH_LMDB=0 for a program that links one library only (the
 * fresh-process hit uses those, so a process never loads the library it does not use).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef WITH_LMDB
#define WITH_LMDB 1
#endif
#ifndef WITH_SQLITE
#define WITH_SQLITE 1
#endif
#if WITH_LMDB
#include <lmdb.h>
#endif
#if WITH_SQLITE
#include <sqlite3.h>
#endif

enum { K_LMDB = 1, K_SQLITE = 2 };
enum { KEY_LEN = 32, REC_CAP = 1024 };

static const char *mode = "";

static void die(const char *fmt, ...) {
  va_list ap;
  fprintf(stderr, "bench %s [pid %d]: ", mode, (int)getpid());
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fputc('\n', stderr);
  exit(2);
}

#if WITH_LMDB
#define MDB(call)                                                                         \
  do {                                                                                    \
    int rc_ = (call);                                                                     \
    if (rc_ != MDB_SUCCESS) die("line %d: %s: %s", __LINE__, #call, mdb_strerror(rc_)); \
  } while (0)
#endif
#if WITH_SQLITE
#define SQL(db, call)                                                                       \
  do {                                                                                      \
    int rc_ = (call);                                                                       \
    if (rc_ != SQLITE_OK)                                                                   \
      die("line %d: %s: %s (%d): %s", __LINE__, #call, sqlite3_errstr(rc_), rc_,            \
          (db) ? sqlite3_errmsg(db) : "");                                                  \
  } while (0)
#endif

static uint64_t now_ns(void) {
  struct timespec ts;
  if (clock_gettime(CLOCK_MONOTONIC, &ts) != 0) die("clock_gettime: %s", strerror(errno));
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* ---- the data: keys and records, deterministic from an index ---- */

static uint64_t mix64(uint64_t x) { /* splitmix64's finalizer */
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

/* 32 lower-case hex digits, as the cache's keyed hash of a URL. */
static void make_key(uint64_t i, char out[KEY_LEN + 1]) {
  snprintf(out, KEY_LEN + 1, "%016" PRIx64 "%016" PRIx64, mix64(i ^ 0x6b657931ULL),
           mix64(i ^ (0x6b657932ULL << 32)));
}

/* The text record, in the format of Sources/AttachmentKit/Cache/CacheRecord.swift (about 460
 * bytes: a JPEG with every optional line a typical CDN answer fills in). */
static size_t make_record(uint64_t i, char *buf, size_t cap) {
  uint64_t h = mix64(i * 7 + 1);
  uint64_t t = 1764000000u + h % 2000000u;
  unsigned ms = (unsigned)(mix64(h) % 1000u);
  int n = snprintf(
      buf, cap,
      "v 2\n"
      "url https://cdn.example.com/media/2025/11/%06" PRIu64 "/photo-%" PRIu64
      ".jpg?w=1080&sig=%016" PRIx64 "\n"
      "sha256 %016" PRIx64 "%016" PRIx64 "%016" PRIx64 "%016" PRIx64 "\n"
      "bytes %" PRIu64 "\n"
      "type jpeg\nmime image/jpeg\nwidth 1080\nheight 1350\npeer public\n"
      "etag \"%016" PRIx64 "\"\n"
      "lastmod Tue, 25 Nov 2025 14:03:12 GMT\n"
      "date Wed, 26 Nov 2025 09:41:07 GMT\n"
      "cc public, max-age=86400\n"
      "fetched %" PRIu64 ".%03u\n"
      "fresh %" PRIu64 ".%03u\n"
      "access %" PRIu64 ".%03u\n"
      "seal %" PRIu64 " %" PRIu64 " %u\n",
      i % 1000000u, i, mix64(h + 1), mix64(h + 2), mix64(h + 3), mix64(h + 4), mix64(h + 5),
      20000u + h % 2000000u, mix64(h + 6), t, ms, t + 86400u, ms, t, ms,
      1000000u + mix64(h + 7) % 9000000u, t, (unsigned)(mix64(h + 8) % 1000000000u));
  if (n < 0 || (size_t)n >= cap) die("record %" PRIu64 " does not fit", i);
  return (size_t)n;
}

/* ---- the store: one interface over both libraries ---- */

typedef struct {
  int kind;
  const char *path;
#if WITH_LMDB
  MDB_env *env;
  MDB_dbi dbi;
  int dbi_open;
  MDB_txn *rtxn; /* the read transaction, reset between lookups and renewed (MDB_NOTLS) */
  MDB_txn *wtxn;
#endif
#if WITH_SQLITE
  sqlite3 *db;
  sqlite3_stmt *get, *put, *del, *begin, *commit, *count;
#endif
} Store;

static int parse_kind(const char *s) {
  if (strcmp(s, "lmdb") == 0) {
    if (!WITH_LMDB) die("this build has no LMDB");
    return K_LMDB;
  }
  if (strcmp(s, "sqlite") == 0) {
    if (!WITH_SQLITE) die("this build has no SQLite");
    return K_SQLITE;
  }
  die("unknown store %s (lmdb or sqlite)", s);
  return 0;
}

static void remove_store(const char *path) {
  static const char *suffixes[] = {"", "-lock", "-wal", "-shm", "-journal"};
  char p[4096];
  for (size_t i = 0; i < sizeof suffixes / sizeof *suffixes; i++) {
    snprintf(p, sizeof p, "%s%s", path, suffixes[i]);
    if (unlink(p) != 0 && errno != ENOENT) die("unlink %s: %s", p, strerror(errno));
  }
}

static long long file_size(const char *path, const char *suffix) {
  char p[4096];
  struct stat st;
  snprintf(p, sizeof p, "%s%s", path, suffix);
  if (stat(p, &st) != 0) {
    if (errno == ENOENT) return 0;
    die("stat %s: %s", p, strerror(errno));
  }
  return (long long)st.st_size;
}

#if WITH_SQLITE
static void sql_prepare(Store *s, sqlite3_stmt **st, const char *sql) {
  if (*st == NULL) SQL(s->db, sqlite3_prepare_v3(s->db, sql, -1, SQLITE_PREPARE_PERSISTENT, st, NULL));
}

/* Steps a statement that returns no row, then resets it. */
static void sql_done(Store *s, sqlite3_stmt *st) {
  int rc = sqlite3_step(st);
  if (rc != SQLITE_DONE)
    die("step \"%s\": %s (%d): %s", sqlite3_sql(st), sqlite3_errstr(rc), rc, sqlite3_errmsg(s->db));
  SQL(s->db, sqlite3_reset(st));
}

static void sql_exec(Store *s, const char *sql) {
  char *err = NULL;
  int rc = sqlite3_exec(s->db, sql, NULL, NULL, &err);
  if (rc != SQLITE_OK) die("exec \"%s\": %s (%d): %s", sql, sqlite3_errstr(rc), rc, err ? err : "");
}
#endif

/* Opens the store as the cache would in any process: same flags for readers and writers. With
 * create, makes the schema (SQLite's journal_mode=WAL is persistent: set once, at creation). */
static void store_open(Store *s, int kind, const char *path, int create) {
  memset(s, 0, sizeof *s);
  s->kind = kind;
  s->path = path;
#if WITH_LMDB
  if (kind == K_LMDB) {
    MDB(mdb_env_create(&s->env));
    MDB(mdb_env_set_mapsize(s->env, (size_t)1 << 30));
    MDB(mdb_env_open(s->env, path, MDB_NOSUBDIR | MDB_NOTLS | MDB_NOSYNC | MDB_NOMETASYNC, 0644));
    (void)create; /* the main database needs no schema */
    return;
  }
#endif
#if WITH_SQLITE
  if (kind == K_SQLITE) {
    int rc = sqlite3_open_v2(path, &s->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL);
    if (rc != SQLITE_OK) die("sqlite3_open_v2 %s: %s", path, sqlite3_errstr(rc));
    SQL(s->db, sqlite3_busy_timeout(s->db, 5000));
    if (create) {
      sqlite3_stmt *st;
      SQL(s->db, sqlite3_prepare_v2(s->db, "PRAGMA journal_mode=WAL", -1, &st, NULL));
      if (sqlite3_step(st) != SQLITE_ROW) die("journal_mode=WAL: %s", sqlite3_errmsg(s->db));
      const char *jm = (const char *)sqlite3_column_text(st, 0);
      if (jm == NULL || strcmp(jm, "wal") != 0) die("journal_mode is %s, not wal", jm ? jm : "?");
      SQL(s->db, sqlite3_finalize(st));
      sql_exec(s, "CREATE TABLE IF NOT EXISTS records(name TEXT PRIMARY KEY, bytes BLOB) WITHOUT ROWID");
    }
    sql_exec(s, "PRAGMA synchronous=NORMAL");
    const char *mm = getenv("BENCH_SQLITE_MMAP"); /* a sensitivity run only: not the cache's setting */
    if (mm != NULL && *mm) {
      char sql[96];
      snprintf(sql, sizeof sql, "PRAGMA mmap_size=%lld", (long long)strtoll(mm, NULL, 10));
      sql_exec(s, sql);
    }
    return;
  }
#endif
  die("no store");
}

#if WITH_LMDB
static void lmdb_dbi(Store *s, MDB_txn *txn) {
  if (!s->dbi_open) { /* the unnamed main database: the same handle in every transaction */
    MDB(mdb_dbi_open(txn, NULL, 0, &s->dbi));
    s->dbi_open = 1;
  }
}
#endif

/* Looks a key up and copies its value into out: its length, or -1 when absent. */
static long store_get(Store *s, const char *key, char *out, size_t cap) {
  long n = -1;
#if WITH_LMDB
  if (s->kind == K_LMDB) {
    if (s->rtxn == NULL) {
      MDB(mdb_txn_begin(s->env, NULL, MDB_RDONLY, &s->rtxn));
      lmdb_dbi(s, s->rtxn);
    } else {
      MDB(mdb_txn_renew(s->rtxn));
    }
    MDB_val k = {KEY_LEN, (void *)key}, v;
    int rc = mdb_get(s->rtxn, s->dbi, &k, &v);
    if (rc == MDB_SUCCESS) {
      if (v.mv_size > cap) die("value of %zu bytes", v.mv_size);
      memcpy(out, v.mv_data, v.mv_size);
      n = (long)v.mv_size;
    } else if (rc != MDB_NOTFOUND) {
      die("mdb_get: %s", mdb_strerror(rc));
    }
    mdb_txn_reset(s->rtxn);
    return n;
  }
#endif
#if WITH_SQLITE
  sql_prepare(s, &s->get, "SELECT bytes FROM records WHERE name = ?1");
  SQL(s->db, sqlite3_bind_text(s->get, 1, key, KEY_LEN, SQLITE_STATIC));
  int rc = sqlite3_step(s->get);
  if (rc == SQLITE_ROW) {
    const void *b = sqlite3_column_blob(s->get, 0);
    int len = sqlite3_column_bytes(s->get, 0);
    if (len < 0 || (size_t)len > cap || (b == NULL && len > 0)) die("value of %d bytes", len);
    memcpy(out, b, (size_t)len);
    n = len;
  } else if (rc != SQLITE_DONE) {
    die("select: %s (%d): %s", sqlite3_errstr(rc), rc, sqlite3_errmsg(s->db));
  }
  SQL(s->db, sqlite3_reset(s->get)); /* ends the read transaction */
#endif
  return n;
}

static void tx_begin(Store *s) {
#if WITH_LMDB
  if (s->kind == K_LMDB) {
    MDB(mdb_txn_begin(s->env, NULL, 0, &s->wtxn));
    lmdb_dbi(s, s->wtxn);
    return;
  }
#endif
#if WITH_SQLITE
  sql_prepare(s, &s->begin, "BEGIN IMMEDIATE"); /* takes the write lock now, through busy_timeout */
  sql_done(s, s->begin);
#endif
}

static void tx_put(Store *s, const char *key, const char *val, size_t len) {
#if WITH_LMDB
  if (s->kind == K_LMDB) {
    MDB_val k = {KEY_LEN, (void *)key}, v = {len, (void *)val};
    MDB(mdb_put(s->wtxn, s->dbi, &k, &v, 0));
    return;
  }
#endif
#if WITH_SQLITE
  sql_prepare(s, &s->put, "INSERT OR REPLACE INTO records(name, bytes) VALUES (?1, ?2)");
  SQL(s->db, sqlite3_bind_text(s->put, 1, key, KEY_LEN, SQLITE_STATIC));
  SQL(s->db, sqlite3_bind_blob(s->put, 2, val, (int)len, SQLITE_STATIC));
  sql_done(s, s->put);
#endif
}

/* Deletes a key that must exist. */
static void tx_del(Store *s, const char *key) {
#if WITH_LMDB
  if (s->kind == K_LMDB) {
    MDB_val k = {KEY_LEN, (void *)key};
    MDB(mdb_del(s->wtxn, s->dbi, &k, NULL));
    return;
  }
#endif
#if WITH_SQLITE
  sql_prepare(s, &s->del, "DELETE FROM records WHERE name = ?1");
  SQL(s->db, sqlite3_bind_text(s->del, 1, key, KEY_LEN, SQLITE_STATIC));
  sql_done(s, s->del);
  if (sqlite3_changes(s->db) != 1) die("delete %.32s: %d rows", key, sqlite3_changes(s->db));
#endif
}

static void tx_commit(Store *s) {
#if WITH_LMDB
  if (s->kind == K_LMDB) {
    MDB_txn *t = s->wtxn;
    s->wtxn = NULL;
    MDB(mdb_txn_commit(t));
    return;
  }
#endif
#if WITH_SQLITE
  sql_prepare(s, &s->commit, "COMMIT");
  sql_done(s, s->commit);
#endif
}

static long long store_count(Store *s) {
#if WITH_LMDB
  if (s->kind == K_LMDB) {
    MDB_txn *t;
    MDB_stat st;
    MDB(mdb_txn_begin(s->env, NULL, MDB_RDONLY, &t));
    lmdb_dbi(s, t);
    MDB(mdb_stat(t, s->dbi, &st));
    mdb_txn_abort(t);
    return (long long)st.ms_entries;
  }
#endif
#if WITH_SQLITE
  sql_prepare(s, &s->count, "SELECT count(*) FROM records");
  if (sqlite3_step(s->count) != SQLITE_ROW) die("count: %s", sqlite3_errmsg(s->db));
  long long n = sqlite3_column_int64(s->count, 0);
  SQL(s->db, sqlite3_reset(s->count));
  return n;
#endif
  return -1;
}

static void store_close(Store *s) {
#if WITH_LMDB
  if (s->kind == K_LMDB) {
    if (s->wtxn) mdb_txn_abort(s->wtxn);
    if (s->rtxn) mdb_txn_abort(s->rtxn);
    mdb_env_close(s->env);
    s->env = NULL;
    return;
  }
#endif
#if WITH_SQLITE
  sqlite3_stmt **all[] = {&s->get, &s->put, &s->del, &s->begin, &s->commit, &s->count};
  for (size_t i = 0; i < sizeof all / sizeof *all; i++) {
    SQL(s->db, sqlite3_finalize(*all[i]));
    *all[i] = NULL;
  }
  SQL(NULL, sqlite3_close(s->db));
  s->db = NULL;
#endif
}

/* ---- helpers for the workloads ---- */

static void put_one(Store *s, uint64_t i) {
  char key[KEY_LEN + 1], rec[REC_CAP];
  make_key(i, key);
  size_t n = make_record(i, rec, sizeof rec);
  tx_begin(s);
  tx_put(s, key, rec, n);
  tx_commit(s);
}

static void put_range_one_txn(Store *s, uint64_t first, uint64_t count) {
  char key[KEY_LEN + 1], rec[REC_CAP];
  tx_begin(s);
  for (uint64_t i = first; i < first + count; i++) {
    make_key(i, key);
    size_t n = make_record(i, rec, sizeof rec);
    tx_put(s, key, rec, n);
  }
  tx_commit(s);
}

/* Checks that record i is present with exactly its bytes. */
static void expect_record(Store *s, uint64_t i) {
  char key[KEY_LEN + 1], want[REC_CAP], got[REC_CAP];
  make_key(i, key);
  size_t n = make_record(i, want, sizeof want);
  long g = store_get(s, key, got, sizeof got);
  if (g < 0) die("record %" PRIu64 " (%s) is missing", i, key);
  if ((size_t)g != n || memcmp(got, want, n) != 0) die("record %" PRIu64 " has other bytes", i);
}

static void expect_absent(Store *s, uint64_t i) {
  char key[KEY_LEN + 1], got[REC_CAP];
  make_key(i, key);
  if (store_get(s, key, got, sizeof got) >= 0) die("record %" PRIu64 " should be absent", i);
}

static void expect_count(Store *s, long long want, const char *what) {
  long long n = store_count(s);
  if (n != want) die("%s: %lld records, expected %lld", what, n, want);
}

static void store_create(int kind, const char *path) {
  Store s;
  remove_store(path);
  store_open(&s, kind, path, 1);
  store_close(&s);
}

static int cmp_u64(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

/* Nearest-rank percentile of a sorted array. */
static uint64_t pct(const uint64_t *v, size_t n, double p) {
  size_t r = (size_t)((p / 100.0) * (double)n + 0.999999999);
  if (r < 1) r = 1;
  if (r > n) r = n;
  return v[r - 1];
}

static void read_full(int fd, void *buf, size_t n, const char *what) {
  size_t got = 0;
  while (got < n) {
    ssize_t r = read(fd, (char *)buf + got, n - got);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) die("read %s: %s", what, strerror(errno));
    if (r == 0) die("read %s: end of file after %zu of %zu bytes (a child failed?)", what, got, n);
    got += (size_t)r;
  }
}

static void write_full(int fd, const void *buf, size_t n) {
  size_t done = 0;
  while (done < n) {
    ssize_t w = write(fd, (const char *)buf + done, n - done);
    if (w < 0 && errno == EINTR) continue;
    if (w < 0) die("write: %s", strerror(errno));
    done += (size_t)w;
  }
}

static void wait_ok(pid_t pid, const char *what) {
  int st;
  while (waitpid(pid, &st, 0) < 0)
    if (errno != EINTR) die("waitpid %s: %s", what, strerror(errno));
  if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) die("%s (pid %d) failed: status 0x%x", what, (int)pid, st);
}

static void mark(const char *name) { /* a recognisable system call in an strace log */
  static int on = -1;
  if (on < 0) on = getenv("BENCH_MARKERS") != NULL;
  if (on) {
    char p[128];
    snprintf(p, sizeof p, "/bench-marker/%s", name);
    (void)access(p, F_OK);
  }
}

/* ---- the workloads ---- */

static void cmd_prepare(int kind, const char *path, uint64_t n) {
  Store s;
  store_create(kind, path);
  store_open(&s, kind, path, 0);
  put_range_one_txn(&s, 0, n);
  expect_count(&s, (long long)n, "prepare");
  expect_record(&s, n / 2);
  store_close(&s);
  printf("prepared %" PRIu64 "\n", n);
  printf("store_bytes %lld\n", file_size(path, "") + file_size(path, "-wal"));
}

/* Opens the store once, then times each lookup (key to copied value) of random keys; every
 * answer is compared with the expected bytes, outside the timed span. */
static void cmd_hit(int kind, const char *path, uint64_t n, uint64_t lookups) {
  char (*keys)[KEY_LEN + 1] = malloc(n * sizeof *keys);
  char *recs = malloc(n * REC_CAP);
  size_t *lens = malloc(n * sizeof *lens);
  uint64_t *lat = malloc(lookups * sizeof *lat);
  if (!keys || !recs || !lens || !lat) die("out of memory");
  size_t total = 0;
  for (uint64_t i = 0; i < n; i++) {
    make_key(i, keys[i]);
    lens[i] = make_record(i, recs + i * REC_CAP, REC_CAP);
    total += lens[i];
  }
  Store s;
  store_open(&s, kind, path, 0);
  expect_count(&s, (long long)n, "hit store");
  char buf[REC_CAP];
  uint64_t x = 0x2545F4914F6CDD1DULL; /* xorshift64: the same random keys for both stores */
  uint64_t warm = lookups / 10;
  for (uint64_t j = 0; j < warm + lookups; j++) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    uint64_t i = x % n;
    uint64_t t0 = now_ns();
    long got = store_get(&s, keys[i], buf, sizeof buf);
    uint64_t t1 = now_ns();
    if (got < 0 || (size_t)got != lens[i] || memcmp(buf, recs + i * REC_CAP, lens[i]) != 0)
      die("lookup of record %" PRIu64 ": wrong answer (%ld bytes)", i, got);
    if (j >= warm) lat[j - warm] = t1 - t0;
  }
  store_close(&s);
  /* what a pair of clock reads costs (inside every sample above) */
  uint64_t *ov = malloc(100000 * sizeof *ov);
  if (!ov) die("out of memory");
  for (int j = 0; j < 100000; j++) {
    uint64_t a = now_ns();
    ov[j] = now_ns() - a;
  }
  qsort(ov, 100000, sizeof *ov, cmp_u64);
  qsort(lat, lookups, sizeof *lat, cmp_u64);
  printf("record_bytes_mean %.1f\n", (double)total / (double)n);
  printf("hit_p50_us %.3f\n", pct(lat, lookups, 50) / 1000.0);
  printf("hit_p90_us %.3f\n", pct(lat, lookups, 90) / 1000.0);
  printf("hit_p99_us %.3f\n", pct(lat, lookups, 99) / 1000.0);
  printf("hit_max_us %.3f\n", pct(lat, lookups, 100) / 1000.0);
  printf("clock_pair_ns %" PRIu64 "\n", pct(ov, 100000, 50));
  free(ov), free(lat), free(lens), free(recs), free(keys);
}

static int cmd_hit_once(int kind, const char *path, uint64_t i) {
  char key[KEY_LEN + 1], want[REC_CAP], got[REC_CAP];
  make_key(i, key);
  size_t n = make_record(i, want, sizeof want);
  Store s;
  mark("begin");
  store_open(&s, kind, path, 0);
  mark("opened");
  long g = store_get(&s, key, got, sizeof got);
  mark("looked-up");
  store_close(&s);
  mark("end");
  if (g < 0 || (size_t)g != n || memcmp(got, want, n) != 0) die("record %" PRIu64 ": wrong answer", i);
  return 0;
}

/* PROCS processes, each opening the store after the fork, wait for one start signal, then insert
 * COUNT new records, a transaction each. Wall time: from the signal until the last process has
 * committed and closed the store; per-insert latency: begin to commit, waiting for the lock
 * included. */
static void cmd_batch(int kind, const char *path, int procs, uint64_t count) {
  store_create(kind, path);
  int ready[2], go[2];
  if (pipe(ready) || pipe(go)) die("pipe: %s", strerror(errno));
  pid_t *pids = calloc((size_t)procs, sizeof *pids);
  int *res = calloc((size_t)procs, sizeof *res);
  if (!pids || !res) die("out of memory");
  for (int c = 0; c < procs; c++) {
    int rp[2];
    if (pipe(rp)) die("pipe: %s", strerror(errno));
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) die("fork: %s", strerror(errno));
    if (pid == 0) {
      close(rp[0]), close(ready[0]), close(go[1]);
      uint64_t *lat = malloc((count + 1) * sizeof *lat);
      if (!lat) die("out of memory");
      Store s;
      store_open(&s, kind, path, 0); /* after the fork: each process opens the store itself */
      write_full(ready[1], "r", 1);
      char b;
      if (read(go[0], &b, 1) != 0) die("go pipe");
      char key[KEY_LEN + 1], rec[REC_CAP];
      for (uint64_t j = 0; j < count; j++) {
        uint64_t i = (uint64_t)(c + 1) * 1000000u + j;
        make_key(i, key);
        size_t n = make_record(i, rec, sizeof rec);
        uint64_t t0 = now_ns();
        tx_begin(&s);
        tx_put(&s, key, rec, n);
        tx_commit(&s);
        lat[1 + j] = now_ns() - t0;
      }
      store_close(&s); /* inside the wall time: SQLite's last close checkpoints the WAL */
      lat[0] = now_ns();
      write_full(rp[1], lat, (count + 1) * sizeof *lat);
      exit(0);
    }
    close(rp[1]);
    pids[c] = pid, res[c] = rp[0];
  }
  close(ready[1]), close(go[0]);
  for (int c = 0; c < procs; c++) {
    char b;
    read_full(ready[0], &b, 1, "ready");
  }
  uint64_t t0 = now_ns();
  close(go[1]); /* every child reads end of file: go */
  uint64_t *all = malloc((size_t)procs * count * sizeof *all), *one = malloc((count + 1) * sizeof *one);
  if (!all || !one) die("out of memory");
  uint64_t end = t0;
  for (int c = 0; c < procs; c++) {
    read_full(res[c], one, (count + 1) * sizeof *one, "results");
    close(res[c]);
    wait_ok(pids[c], "inserting child");
    if (one[0] > end) end = one[0];
    memcpy(all + (size_t)c * count, one + 1, count * sizeof *one);
  }
  close(ready[0]);
  Store s;
  store_open(&s, kind, path, 0);
  expect_count(&s, (long long)procs * (long long)count, "after batch");
  for (int c = 0; c < procs; c++)
    for (uint64_t j = 0; j < count; j++) expect_record(&s, (uint64_t)(c + 1) * 1000000u + j);
  store_close(&s);
  size_t n = (size_t)procs * count;
  qsort(all, n, sizeof *all, cmp_u64);
  printf("batch_wall_ms %.3f\n", (end - t0) / 1e6);
  printf("batch_insert_p50_us %.3f\n", pct(all, n, 50) / 1000.0);
  printf("batch_insert_p99_us %.3f\n", pct(all, n, 99) / 1000.0);
  printf("batch_store_bytes %lld\n", file_size(path, "") + file_size(path, "-wal"));
  free(all), free(one), free(pids), free(res);
}

/* A store held at HELD records: each step inserts a new record and deletes the oldest, a
 * transaction each (the oldest is known to the driver: finding it is not timed). */
static void cmd_churn(int kind, const char *path, uint64_t held, uint64_t steps) {
  store_create(kind, path);
  Store s;
  store_open(&s, kind, path, 0);
  put_range_one_txn(&s, 0, held); /* untimed: the store at its size */
  char key[KEY_LEN + 1];
  uint64_t t0 = now_ns();
  for (uint64_t j = 0; j < steps; j++) {
    put_one(&s, held + j); /* a new record, its own transaction */
    make_key(j, key);      /* the oldest, its own transaction */
    tx_begin(&s);
    tx_del(&s, key);
    tx_commit(&s);
  }
  uint64_t t1 = now_ns();
  expect_count(&s, (long long)held, "after churn");
  for (uint64_t i = steps; i < steps + held; i++) expect_record(&s, i);
  for (uint64_t i = steps > held ? steps - held : 0; i < steps; i++) expect_absent(&s, i);
  long long bytes = file_size(path, "") + file_size(path, "-wal");
  store_close(&s);
  printf("churn_wall_ms %.3f\n", (t1 - t0) / 1e6);
  printf("churn_step_mean_us %.3f\n", (t1 - t0) / 1e3 / (double)steps);
  printf("churn_store_bytes %lld\n", bytes);
}

/* The writer of the crash check: one transaction, `count` puts, readiness on fd, then wait to
 * be killed. SQLite gets a 16-page cache so that its transaction spills pages into the WAL
 * before the kill (uncommitted frames a reader must ignore). */
static void crash_writer_child(int kind, const char *path, uint64_t first, uint64_t count, int fd) {
  Store s;
  store_open(&s, kind, path, 0);
#if WITH_SQLITE
  if (kind == K_SQLITE) sql_exec(&s, "PRAGMA cache_size=16");
#endif
  char key[KEY_LEN + 1], rec[REC_CAP];
  tx_begin(&s);
  for (uint64_t i = first; i < first + count; i++) {
    make_key(i, key);
    size_t n = make_record(i, rec, sizeof rec);
    tx_put(&s, key, rec, n);
  }
  write_full(fd, "w", 1);
  for (;;) pause();
}

static pid_t spawn_crash_writer(int kind, const char *path, uint64_t first, uint64_t count, long long *wal_at_kill) {
  int p[2];
  if (pipe(p)) die("pipe: %s", strerror(errno));
  fflush(NULL);
  pid_t w = fork();
  if (w < 0) die("fork: %s", strerror(errno));
  if (w == 0) {
    close(p[0]);
    crash_writer_child(kind, path, first, count, p[1]);
  }
  close(p[1]);
  char b;
  read_full(p[0], &b, 1, "writer ready");
  close(p[0]);
  *wal_at_kill = kind == K_SQLITE ? file_size(path, "-wal") : file_size(path, "");
  if (kill(w, SIGKILL) != 0) die("kill: %s", strerror(errno));
  int st;
  while (waitpid(w, &st, 0) < 0)
    if (errno != EINTR) die("waitpid: %s", strerror(errno));
  if (!WIFSIGNALED(st) || WTERMSIG(st) != SIGKILL) die("writer was not killed by SIGKILL (0x%x)", st);
  return w;
}

/* 100 committed records; then (A) with another process holding the store open, a writer puts
 * 1000 records in one transaction and is killed before its commit: the store opens, the 1000 are
 * absent, the 100 intact, and new write transactions succeed, in this process and in the holder;
 * then (B) the same with nobody else holding the store open, and a reopen after. */
static void cmd_crash_writer(int kind, const char *path) {
  const uint64_t committed = 100, a_first = 5000000, b_first = 5001000, lost = 1000;
  store_create(kind, path);
  Store s;
  store_open(&s, kind, path, 0);
  put_range_one_txn(&s, 0, committed);
  store_close(&s);

  /* A: the writer dies while another process (the holder) has the store open. */
  int hr[2], hg[2];
  if (pipe(hr) || pipe(hg)) die("pipe: %s", strerror(errno));
  fflush(NULL);
  pid_t h = fork();
  if (h < 0) die("fork: %s", strerror(errno));
  if (h == 0) {
    close(hr[0]), close(hg[1]);
    Store hs;
    store_open(&hs, kind, path, 0);
    expect_count(&hs, (long long)committed, "holder at start");
    write_full(hr[1], "h", 1);
    char b;
    read_full(hg[0], &b, 1, "holder go");
    expect_count(&hs, (long long)committed + 1, "holder after the crash");
    expect_record(&hs, 7000000); /* the parent's write after the crash */
    for (uint64_t i = a_first; i < a_first + lost; i++) expect_absent(&hs, i);
    put_one(&hs, 7000001);
    expect_count(&hs, (long long)committed + 2, "holder after its write");
    store_close(&hs);
    exit(0);
  }
  close(hr[1]), close(hg[0]);
  char b;
  read_full(hr[0], &b, 1, "holder ready");
  long long size_a;
  spawn_crash_writer(kind, path, a_first, lost, &size_a);
  store_open(&s, kind, path, 0);
  expect_count(&s, (long long)committed, "A: after the kill");
  for (uint64_t i = 0; i < committed; i++) expect_record(&s, i);
  for (uint64_t i = a_first; i < a_first + lost; i++) expect_absent(&s, i);
  put_one(&s, 7000000); /* LMDB: takes over the dead writer's mutex (EOWNERDEAD) */
  int dead = 0;
#if WITH_LMDB
  if (kind == K_LMDB) MDB(mdb_reader_check(s.env, &dead));
#endif
  write_full(hg[1], "g", 1);
  wait_ok(h, "holder");
  close(hr[0]), close(hg[1]);
  expect_count(&s, (long long)committed + 2, "A: after the holder's write");
  store_close(&s);

  /* B: the writer dies with nobody else having the store open; then a fresh open. */
  long long size_b;
  spawn_crash_writer(kind, path, b_first, lost, &size_b);
  store_open(&s, kind, path, 0);
  expect_count(&s, (long long)committed + 2, "B: after the kill");
  for (uint64_t i = 0; i < committed; i++) expect_record(&s, i);
  expect_record(&s, 7000000), expect_record(&s, 7000001);
  for (uint64_t i = b_first; i < b_first + lost; i++) expect_absent(&s, i);
  for (uint64_t i = a_first; i < a_first + lost; i++) expect_absent(&s, i);
  put_one(&s, 7000002);
  store_close(&s);
  store_open(&s, kind, path, 0);
  expect_count(&s, (long long)committed + 3, "B: reopened");
  expect_record(&s, 7000002);
  store_close(&s);
  printf("crash_%s ok (%s bytes at the kills: %lld, %lld; stale readers cleared: %d)\n",
         kind == K_LMDB ? "lmdb" : "sqlite", kind == K_LMDB ? "data file" : "WAL", size_a, size_b, dead);
}

static uint64_t arg_u64(const char *s) {
  char *end;
  errno = 0;
  unsigned long long v = strtoull(s, &end, 10);
  if (errno || *end || end == s) die("not a number: %s", s);
  return (uint64_t)v;
}

int main(int argc, char **argv) {
  if (argc < 2) goto usage;
  mode = argv[1];
  if (strcmp(mode, "noop") == 0) return 0;
  if (strcmp(mode, "versions") == 0) {
#if WITH_LMDB
    printf("lmdb %s\n", mdb_version(NULL, NULL, NULL));
#endif
#if WITH_SQLITE
    printf("sqlite %s\n", sqlite3_libversion());
#endif
    return 0;
  }
  if (argc < 4) goto usage;
  int kind = parse_kind(argv[2]);
  const char *path = argv[3];
  if (strcmp(mode, "prepare") == 0 && argc == 5) cmd_prepare(kind, path, arg_u64(argv[4]));
  else if (strcmp(mode, "hit") == 0 && argc == 6) cmd_hit(kind, path, arg_u64(argv[4]), arg_u64(argv[5]));
  else if (strcmp(mode, "hit-once") == 0 && argc == 5) return cmd_hit_once(kind, path, arg_u64(argv[4]));
  else if (strcmp(mode, "batch") == 0 && argc == 6) cmd_batch(kind, path, (int)arg_u64(argv[4]), arg_u64(argv[5]));
  else if (strcmp(mode, "churn") == 0 && argc == 6) cmd_churn(kind, path, arg_u64(argv[4]), arg_u64(argv[5]));
  else if (strcmp(mode, "crash-writer") == 0 && argc == 4) cmd_crash_writer(kind, path);
  else goto usage;
  return 0;
usage:
  fprintf(stderr,
          "usage: bench versions | noop | prepare KIND PATH N | hit KIND PATH N LOOKUPS | hit-once KIND PATH INDEX\n"
          "       | batch KIND PATH PROCS COUNT | churn KIND PATH HELD STEPS | crash-writer KIND PATH\n"
          "KIND: lmdb or sqlite\n");
  return 2;
}
