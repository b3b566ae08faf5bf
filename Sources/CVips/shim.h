#ifndef ATTACHMENTKIT_CVIPS_SHIM_H
#define ATTACHMENTKIT_CVIPS_SHIM_H

// The few libvips types and constants the rescue uses, and typed wrappers for its variadic
// calls, which Swift cannot call directly. libvips is loaded at run time (dlopen) on the first
// rescue, so each wrapper takes the resolved function pointer; no logic lives here.
//
// <vips/vips.h> is not included: it needs glib's headers, which are not on the default include
// path, and a pkg-config module would link libvips into every process. The values below are
// those of libvips 8.14's headers; they are part of its stable ABI.

typedef struct _VipsImage VipsImage;

/// VipsFailOn: VIPS_FAIL_ON_TRUNCATED — a truncated file is an error.
#define AK_VIPS_FAIL_ON_TRUNCATED 1
/// VipsSize: VIPS_SIZE_DOWN — thumbnail only ever shrinks.
#define AK_VIPS_SIZE_DOWN 2
/// VipsInterpretation: VIPS_INTERPRETATION_sRGB.
#define AK_VIPS_INTERPRETATION_SRGB 22

typedef VipsImage *(*ak_vips_new_from_file_fn)(const char *name, ...);
typedef int (*ak_vips_thumbnail_fn)(const char *filename, VipsImage **out, int width, ...);
typedef int (*ak_vips_colourspace_fn)(VipsImage *in, VipsImage **out, int space, ...);
typedef int (*ak_vips_save_fn)(VipsImage *in, const char *filename, ...);

/// Opens an image for its header only (pixels are decoded later, if ever); truncation fails.
static inline VipsImage *ak_vips_open_header(void *fn, const char *path) {
  return ((ak_vips_new_from_file_fn)fn)(path, "fail_on", AK_VIPS_FAIL_ON_TRUNCATED, (void *)0);
}

/// vips_thumbnail into a width × height box, shrinking only, with EXIF auto-rotation (the
/// default), shrink-on-load where the loader has it, and truncation an error. Loader options
/// go in brackets after the path (`file[n=-1]` for every frame).
static inline int ak_vips_thumbnail(void *fn, const char *path, VipsImage **out, int width, int height) {
  return ((ak_vips_thumbnail_fn)fn)(path, out, width, "height", height, "size", AK_VIPS_SIZE_DOWN,
                                    "fail_on", AK_VIPS_FAIL_ON_TRUNCATED, (void *)0);
}

typedef int (*ak_vips_thumbnail_image_fn)(VipsImage *in, VipsImage **out, int width, ...);

/// vips_thumbnail_image: the same box and rules as ak_vips_thumbnail, from an image already
/// opened (no shrink-on-load).
static inline int ak_vips_thumbnail_image(void *fn, VipsImage *in, VipsImage **out, int width, int height) {
  return ((ak_vips_thumbnail_image_fn)fn)(in, out, width, "height", height, "size", AK_VIPS_SIZE_DOWN, (void *)0);
}

/// vips_colourspace to sRGB (alpha kept).
static inline int ak_vips_to_srgb(void *fn, VipsImage *in, VipsImage **out) {
  return ((ak_vips_colourspace_fn)fn)(in, out, AK_VIPS_INTERPRETATION_SRGB, (void *)0);
}

/// vips_jpegsave with quality `quality` (1–100) and metadata stripped. Huffman tables are not
/// optimised: that makes libjpeg hold every DCT coefficient of the image (about 40 MiB more
/// peak memory for 4096×2731) for a file a few per cent smaller.
static inline int ak_vips_jpegsave(void *fn, VipsImage *in, const char *path, int quality) {
  return ((ak_vips_save_fn)fn)(in, path, "Q", quality, "strip", 1, (void *)0);
}

/// vips_pngsave with zlib level 6 and metadata stripped.
static inline int ak_vips_pngsave(void *fn, VipsImage *in, const char *path) {
  return ((ak_vips_save_fn)fn)(in, path, "compression", 6, "strip", 1, (void *)0);
}

/// vips_gifsave (every frame, with each frame's delay), metadata stripped.
static inline int ak_vips_gifsave(void *fn, VipsImage *in, const char *path) {
  return ((ak_vips_save_fn)fn)(in, path, "strip", 1, (void *)0);
}

#endif
