// CImageIO: a small C wrapper over libpng and libjpeg(-turbo) for the Swift module ImageIO.
//
// Both libraries report fatal errors by longjmp (libjpeg through `error_exit`, libpng through
// `png_error`). Swift cannot call setjmp, so every entry point here does the setjmp itself and
// returns a status code plus a NUL-terminated message instead. Nothing in this header is
// public API of mlconv; use the Swift module `ImageIO`.
//
// Pixel layout everywhere: 8-bit, row-major, interleaved channels (HWC), no row padding.
#pragma once

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/// Status codes returned by every `cimg_*` function.
typedef enum {
    CIMG_OK = 0,
    /// The data is truncated or corrupt; the message is the library's.
    CIMG_ERR_CORRUPT = 1,
    /// A valid file the wrapper does not handle (e.g. 12-bit JPEG, unknown colour space).
    CIMG_ERR_UNSUPPORTED = 2,
    /// Out of memory.
    CIMG_ERR_NOMEM = 3,
    /// The header claims an image larger than `CIMG_MAX_PIXELS` pixels.
    CIMG_ERR_TOO_LARGE = 4,
    /// Invalid arguments (encode: bad size or channel count).
    CIMG_ERR_ARGUMENT = 5,
} cimg_status;

/// Largest accepted width × height (guards against headers claiming absurd sizes).
#define CIMG_MAX_PIXELS ((size_t)1 << 28)

// MARK: errors (issue 13)
/// Sets the most bytes a decoded image may take (3 bytes a pixel counted); 0: no limit besides
/// CIMG_MAX_PIXELS. Larger images fail with CIMG_ERR_TOO_LARGE before any pixel is allocated.
void cimg_set_max_bytes(size_t bytes);
/// The value set by cimg_set_max_bytes.
size_t cimg_get_max_bytes(void);

/// A decoded image. `pixels` holds `width * height * channels` bytes, allocated with malloc;
/// release it with `cimg_free`. `channels` is 1 (gray) or 3 (RGB).
typedef struct {
    int width;
    int height;
    int channels;
    unsigned char *pixels;
} cimg_image;

/// Decodes a PNG held in memory into 8-bit gray (gray and gray+alpha files) or 8-bit RGB
/// (RGB, RGBA and palette files). 16-bit samples keep their high byte; bit depths below 8 are
/// scaled to 0–255; alpha and tRNS transparency are dropped (not composited); gamma and colour
/// profile chunks are ignored; interlaced files are de-interlaced. Data after the last image
/// row (including a missing IEND) is not read.
/// On failure `out->pixels` is NULL and `message` (capacity `message_size`) says why.
cimg_status cimg_png_decode(const unsigned char *data, size_t size, cimg_image *out,
                            char *message, size_t message_size);

/// Decodes a baseline/progressive 8-bit JPEG held in memory: grayscale → 1 channel;
/// YCbCr / RGB → 3 channels RGB; CMYK / YCCK → 3 channels RGB with Pillow's formula
/// (R = (255−K) − (C·(255−K))/255, Adobe-inverted data un-inverted first). Uses libjpeg's
/// defaults (ISLOW IDCT, fancy upsampling), as Pillow does. A premature end of data is an
/// error (CIMG_ERR_CORRUPT), other libjpeg warnings are ignored. EXIF orientation is not applied.
cimg_status cimg_jpeg_decode(const unsigned char *data, size_t size, cimg_image *out,
                             char *message, size_t message_size);

/// Encodes 8-bit gray (`channels` 1) or RGB (`channels` 3) pixels, HWC, as a non-interlaced PNG
/// in memory (no gamma / colour chunks). On success `*out_data` (free with `cimg_free`) holds
/// `*out_size` bytes.
cimg_status cimg_png_encode(const unsigned char *pixels, int width, int height, int channels,
                            unsigned char **out_data, size_t *out_size,
                            char *message, size_t message_size);

/// Releases memory returned by this library (NULL is fine).
void cimg_free(void *pointer);

/// The libpng and libjpeg versions linked, e.g. "libpng 1.6.39, libjpeg 62 (turbo 2.1.5)".
const char *cimg_library_versions(void);

#ifdef __cplusplus
}
#endif
