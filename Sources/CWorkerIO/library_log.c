// The messages a rescue's libraries log (libvips through GLib, FFmpeg through av_log), kept in
// a small bounded list instead of being written to standard error; the worker takes them
// after each job and returns them with its answer.
#include "CWorkerIO.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#define AK_LOG_MESSAGES 8
#define AK_LOG_MESSAGE_BYTES 240

static pthread_mutex_t ak_log_lock = PTHREAD_MUTEX_INITIALIZER;
static char ak_log_messages[AK_LOG_MESSAGES][AK_LOG_MESSAGE_BYTES];
static int ak_log_count = 0;
static long ak_log_dropped = 0;
// FFmpeg builds a line from several calls; the part so far.
static char ak_log_pending[AK_LOG_MESSAGE_BYTES];
static size_t ak_log_pending_length = 0;
static int ak_glib_captured = 0;
static int ak_av_captured = 0;

// Adds `library: text` (trailing white space dropped) unless it is empty or already kept. The
// caller holds the lock.
static void ak_log_add_locked(const char *library, const char *text) {
  char line[AK_LOG_MESSAGE_BYTES];
  int written = snprintf(line, sizeof line, "%s: %s", library, text);
  if (written <= 0) return;
  size_t length = strlen(line);
  while (length > 0 && (line[length - 1] == '\n' || line[length - 1] == '\r' || line[length - 1] == ' ')) {
    line[--length] = 0;
  }
  if (length <= strlen(library) + 2) return;
  for (int index = 0; index < ak_log_count; index++) {
    if (strcmp(ak_log_messages[index], line) == 0) return;
  }
  if (ak_log_count == AK_LOG_MESSAGES) {
    ak_log_dropped++;
    return;
  }
  memcpy(ak_log_messages[ak_log_count++], line, length + 1);
}

// GLib's GLogField: a key, its value, and the value's length (-1: NUL-terminated).
struct ak_glib_field {
  const char *key;
  const void *value;
  ssize_t length;
};

// GLib's levels: 1 << 2 error, 1 << 3 critical, 1 << 4 warning; 1 for G_LOG_WRITER_HANDLED.
static int ak_glib_writer(int level, const struct ak_glib_field *fields, size_t count, void *data) {
  (void)data;
  if ((level & ((1 << 2) | (1 << 3) | (1 << 4))) == 0) return 1;
  const char *domain = "glib";
  char message[AK_LOG_MESSAGE_BYTES] = {0};
  for (size_t index = 0; index < count; index++) {
    const struct ak_glib_field *field = &fields[index];
    if (field->value == NULL) continue;
    size_t length = field->length < 0 ? strlen(field->value) : (size_t)field->length;
    if (strcmp(field->key, "MESSAGE") == 0) {
      if (length >= sizeof message) length = sizeof message - 1;
      memcpy(message, field->value, length);
      message[length] = 0;
    } else if (strcmp(field->key, "GLIB_DOMAIN") == 0 && field->length < 0) {
      domain = field->value;
    }
  }
  pthread_mutex_lock(&ak_log_lock);
  ak_log_add_locked(strcmp(domain, "VIPS") == 0 ? "libvips" : domain, message);
  pthread_mutex_unlock(&ak_log_lock);
  return 1;
}

int ak_library_log_capture_glib(void *set_writer_func) {
  typedef void (*setter)(int (*)(int, const struct ak_glib_field *, size_t, void *), void *, void (*)(void *));
  if (set_writer_func == NULL) return -1;
  pthread_mutex_lock(&ak_log_lock);
  int first = !ak_glib_captured;
  ak_glib_captured = 1;
  pthread_mutex_unlock(&ak_log_lock);
  // GLib aborts when its writer is set twice.
  if (first) ((setter)set_writer_func)(ak_glib_writer, NULL, NULL);
  return 0;
}

// The first two fields of FFmpeg's AVClass (stable since FFmpeg 0.6): its name and the
// function that names an instance.
struct ak_av_class {
  const char *class_name;
  const char *(*item_name)(void *context);
};

// FFmpeg's levels: 16 error, 24 warning; higher numbers are chattier.
static void ak_av_callback(void *context, int level, const char *format, va_list arguments) {
  if (level > 24) return;
  char piece[AK_LOG_MESSAGE_BYTES];
  vsnprintf(piece, sizeof piece, format, arguments);
  // Said of the poster's own output format (FFmpeg 5.1's MJPEG encoder takes full-range
  // YUV 4:2:0 only as the "J" format swscale calls deprecated), never of the input.
  if (strstr(piece, "deprecated pixel format used") != NULL) return;
  // Said of the output's name (a worker writes to /proc/self/fd/N), never of the input.
  if (strstr(piece, "extension is not .m4a nor .m4v") != NULL) return;
  pthread_mutex_lock(&ak_log_lock);
  if (ak_log_pending_length == 0 && context != NULL) {
    const struct ak_av_class *class = *(const struct ak_av_class **)context;
    const char *name = class == NULL ? NULL : class->item_name ? class->item_name(context) : class->class_name;
    if (name != NULL) {
      int written = snprintf(ak_log_pending, sizeof ak_log_pending, "[%s] ", name);
      ak_log_pending_length = written > 0 ? (size_t)written : 0;
      if (ak_log_pending_length >= sizeof ak_log_pending) ak_log_pending_length = sizeof ak_log_pending - 1;
    }
  }
  size_t room = sizeof ak_log_pending - 1 - ak_log_pending_length;
  size_t length = strlen(piece);
  memcpy(ak_log_pending + ak_log_pending_length, piece, length < room ? length : room);
  ak_log_pending_length += length < room ? length : room;
  ak_log_pending[ak_log_pending_length] = 0;
  if (length > 0 && piece[length - 1] == '\n') {
    ak_log_add_locked("FFmpeg", ak_log_pending);
    ak_log_pending_length = 0;
  }
  pthread_mutex_unlock(&ak_log_lock);
}

int ak_library_log_capture_av(void *set_callback) {
  typedef void (*setter)(void (*)(void *, int, const char *, va_list));
  if (set_callback == NULL) return -1;
  pthread_mutex_lock(&ak_log_lock);
  int first = !ak_av_captured;
  ak_av_captured = 1;
  pthread_mutex_unlock(&ak_log_lock);
  if (first) ((setter)set_callback)(ak_av_callback);
  return 0;
}

long ak_library_log_take(char *buffer, size_t size) {
  pthread_mutex_lock(&ak_log_lock);
  if (ak_log_pending_length > 0) {
    ak_log_add_locked("FFmpeg", ak_log_pending);
    ak_log_pending_length = 0;
  }
  size_t used = 0;
  if (size > 0) buffer[0] = 0;
  for (int index = 0; index < ak_log_count; index++) {
    size_t length = strlen(ak_log_messages[index]);
    if (size == 0 || used + length + 2 > size) {
      ak_log_dropped++;
      continue;
    }
    memcpy(buffer + used, ak_log_messages[index], length);
    used += length;
    buffer[used++] = '\n';
    buffer[used] = 0;
  }
  long dropped = ak_log_dropped;
  ak_log_count = 0;
  ak_log_dropped = 0;
  pthread_mutex_unlock(&ak_log_lock);
  return dropped;
}
