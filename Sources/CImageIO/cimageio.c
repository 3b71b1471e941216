// CImageIO: libpng / libjpeg wrappers that turn longjmp-style fatal errors into status codes.
// See include/cimageio.h for the contract of each function.
#include "cimageio.h"

#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <png.h>
#include <jpeglib.h>
#include <jerror.h>

#define CIMG_STR2(x) #x
#define CIMG_STR(x) CIMG_STR2(x)

static void cimg_set_message(char *message, size_t message_size, const char *text) {
    if (message == NULL || message_size == 0) return;
    snprintf(message, message_size, "%s", text ? text : "");
}

void cimg_free(void *pointer) { free(pointer); }

const char *cimg_library_versions(void) {
#ifdef LIBJPEG_TURBO_VERSION
    return "libpng " PNG_LIBPNG_VER_STRING ", libjpeg " CIMG_STR(JPEG_LIB_VERSION)
           " (libjpeg-turbo " CIMG_STR(LIBJPEG_TURBO_VERSION) ")";
#else
    return "libpng " PNG_LIBPNG_VER_STRING ", libjpeg " CIMG_STR(JPEG_LIB_VERSION);
#endif
}

// MARK: errors (issue 13): the memory limit (--max-memory) for decoded pixels; 0: none.
static _Atomic size_t cimg_max_bytes = 0;
void cimg_set_max_bytes(size_t bytes) { cimg_max_bytes = bytes; }
size_t cimg_get_max_bytes(void) { return cimg_max_bytes; }

// Checks width × height × channels against CIMG_MAX_PIXELS and size_t overflow, and the
// decoded RGB size (3 bytes a pixel) against cimg_max_bytes.
static int cimg_size_ok(size_t width, size_t height) {
    if (width == 0 || height == 0) return 0;
    if (width > CIMG_MAX_PIXELS / height) return 0;
    size_t limit = cimg_max_bytes;
    if (limit != 0 && width * height > limit / 3) return 0;
    return 1;
}

// The message of a failed cimg_size_ok: which limit the image exceeds.
static void cimg_size_message(char *text, size_t size, size_t width, size_t height) {
    size_t limit = cimg_max_bytes;
    if (width != 0 && height != 0 && width <= CIMG_MAX_PIXELS / height && limit != 0) {
        snprintf(text, size, "image of %lu x %lu pixels needs %lu bytes decoded, more than the memory limit of %lu bytes; "
                 "raise it with --max-memory if the file is trusted",
                 (unsigned long)width, (unsigned long)height, (unsigned long)(width * height * 3), (unsigned long)limit);
    } else {
        snprintf(text, size, "image of %lu x %lu pixels exceeds the limit of %lu pixels",
                 (unsigned long)width, (unsigned long)height, (unsigned long)CIMG_MAX_PIXELS);
    }
}

// MARK: - PNG

typedef struct {
    const unsigned char *data;
    size_t size;
    size_t position;
} cimg_png_reader;

typedef struct {
    char *message;
    size_t message_size;
    cimg_status status;  // status to report when png_error fires (default CORRUPT)
} cimg_png_error_context;

static void cimg_png_error(png_structp png, png_const_charp text) {
    cimg_png_error_context *context = (cimg_png_error_context *)png_get_error_ptr(png);
    if (context != NULL) cimg_set_message(context->message, context->message_size, text);
    png_longjmp(png, 1);
}

static void cimg_png_warning(png_structp png, png_const_charp text) {
    (void)png;
    (void)text;  // warnings (bad ancillary chunks, …) do not stop decoding
}

static void cimg_png_read(png_structp png, png_bytep out, size_t count) {
    cimg_png_reader *reader = (cimg_png_reader *)png_get_io_ptr(png);
    if (reader->size - reader->position < count) {
        png_error(png, "unexpected end of data (the PNG file is truncated)");
    }
    memcpy(out, reader->data + reader->position, count);
    reader->position += count;
}

cimg_status cimg_png_decode(const unsigned char *data, size_t size, cimg_image *out,
                            char *message, size_t message_size) {
    cimg_set_message(message, message_size, "");
    if (out == NULL) return CIMG_ERR_ARGUMENT;
    out->width = out->height = out->channels = 0;
    out->pixels = NULL;
    if (data == NULL || size < 8 || png_sig_cmp((png_const_bytep)data, 0, 8) != 0) {
        cimg_set_message(message, message_size, "not a PNG signature");
        return CIMG_ERR_CORRUPT;
    }

    cimg_png_error_context context = {message, message_size, CIMG_ERR_CORRUPT};
    cimg_png_reader reader = {data, size, 0};
    png_structp png = png_create_read_struct(PNG_LIBPNG_VER_STRING, &context, cimg_png_error,
                                             cimg_png_warning);
    if (png == NULL) {
        cimg_set_message(message, message_size, "png_create_read_struct failed (out of memory?)");
        return CIMG_ERR_NOMEM;
    }
    png_infop info = png_create_info_struct(png);
    if (info == NULL) {
        png_destroy_read_struct(&png, NULL, NULL);
        cimg_set_message(message, message_size, "png_create_info_struct failed (out of memory?)");
        return CIMG_ERR_NOMEM;
    }

    // Modified after setjmp and read after longjmp: must be volatile.
    unsigned char *volatile pixels = NULL;
    png_bytep *volatile rows = NULL;

    if (setjmp(png_jmpbuf(png))) {
        free(rows);
        free(pixels);
        png_destroy_read_struct(&png, &info, NULL);
        return context.status;
    }

    png_set_read_fn(png, &reader, cimg_png_read);
    png_read_info(png, info);

    png_uint_32 width = png_get_image_width(png, info);
    png_uint_32 height = png_get_image_height(png, info);
    int color_type = png_get_color_type(png, info);
    int bit_depth = png_get_bit_depth(png, info);
    if (!cimg_size_ok(width, height)) {
        char text[240];
        cimg_size_message(text, sizeof text, width, height);
        context.status = CIMG_ERR_TOO_LARGE;
        png_error(png, text);
    }

    if (bit_depth == 16) png_set_strip_16(png);                      // keep the high byte
    if (color_type == PNG_COLOR_TYPE_PALETTE) png_set_palette_to_rgb(png);
    if (color_type == PNG_COLOR_TYPE_GRAY && bit_depth < 8) png_set_expand_gray_1_2_4_to_8(png);
    png_set_strip_alpha(png);  // drops alpha channels and cancels tRNS expansion
    png_set_interlace_handling(png);
    png_read_update_info(png, info);

    int channels = png_get_channels(png, info);
    size_t rowbytes = png_get_rowbytes(png, info);
    if ((channels != 1 && channels != 3) || png_get_bit_depth(png, info) != 8 ||
        rowbytes != (size_t)width * (size_t)channels) {
        char text[160];
        snprintf(text, sizeof text, "unexpected layout after conversion (colour type %d, bit depth %d, "
                 "%d channels)", color_type, bit_depth, channels);
        context.status = CIMG_ERR_UNSUPPORTED;
        png_error(png, text);
    }

    pixels = (unsigned char *)malloc(rowbytes * height);
    rows = (png_bytep *)malloc(sizeof(png_bytep) * height);
    if (pixels == NULL || rows == NULL) {
        context.status = CIMG_ERR_NOMEM;
        png_error(png, "out of memory for the pixel buffer");
    }
    for (png_uint_32 y = 0; y < height; y++) rows[y] = pixels + (size_t)y * rowbytes;
    png_read_image(png, rows);
    // Trailing chunks (and IEND) are deliberately not read: like Pillow, a file whose image
    // data is complete decodes even if what follows is damaged or missing.

    free(rows);
    png_destroy_read_struct(&png, &info, NULL);
    out->width = (int)width;
    out->height = (int)height;
    out->channels = channels;
    out->pixels = pixels;
    return CIMG_OK;
}

typedef struct {
    unsigned char *data;
    size_t size;
    size_t capacity;
} cimg_png_writer;

static void cimg_png_write(png_structp png, png_bytep bytes, size_t count) {
    cimg_png_writer *writer = (cimg_png_writer *)png_get_io_ptr(png);
    if (writer->capacity - writer->size < count) {
        size_t capacity = writer->capacity ? writer->capacity : 4096;
        while (capacity - writer->size < count) {
            if (capacity > SIZE_MAX / 2) png_error(png, "out of memory");
            capacity *= 2;
        }
        unsigned char *grown = (unsigned char *)realloc(writer->data, capacity);
        if (grown == NULL) {
            cimg_png_error_context *context = (cimg_png_error_context *)png_get_error_ptr(png);
            context->status = CIMG_ERR_NOMEM;
            png_error(png, "out of memory for the encoded PNG");
        }
        writer->data = grown;
        writer->capacity = capacity;
    }
    memcpy(writer->data + writer->size, bytes, count);
    writer->size += count;
}

static void cimg_png_flush(png_structp png) { (void)png; }

cimg_status cimg_png_encode(const unsigned char *pixels, int width, int height, int channels,
                            unsigned char **out_data, size_t *out_size,
                            char *message, size_t message_size) {
    cimg_set_message(message, message_size, "");
    if (out_data == NULL || out_size == NULL) return CIMG_ERR_ARGUMENT;
    *out_data = NULL;
    *out_size = 0;
    if (pixels == NULL || width <= 0 || height <= 0 || (channels != 1 && channels != 3) ||
        !cimg_size_ok((size_t)width, (size_t)height) || width > (int)PNG_UINT_31_MAX / 3) {
        cimg_set_message(message, message_size, "invalid size or channel count for PNG encoding");
        return CIMG_ERR_ARGUMENT;
    }

    cimg_png_error_context context = {message, message_size, CIMG_ERR_CORRUPT};
    cimg_png_writer writer = {NULL, 0, 0};
    png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, &context, cimg_png_error,
                                              cimg_png_warning);
    if (png == NULL) {
        cimg_set_message(message, message_size, "png_create_write_struct failed (out of memory?)");
        return CIMG_ERR_NOMEM;
    }
    png_infop info = png_create_info_struct(png);
    if (info == NULL) {
        png_destroy_write_struct(&png, NULL);
        cimg_set_message(message, message_size, "png_create_info_struct failed (out of memory?)");
        return CIMG_ERR_NOMEM;
    }
    if (setjmp(png_jmpbuf(png))) {
        free(writer.data);
        png_destroy_write_struct(&png, &info);
        return context.status;
    }
    png_set_write_fn(png, &writer, cimg_png_write, cimg_png_flush);
    png_set_IHDR(png, info, (png_uint_32)width, (png_uint_32)height, 8,
                 channels == 1 ? PNG_COLOR_TYPE_GRAY : PNG_COLOR_TYPE_RGB,
                 PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
    png_write_info(png, info);
    size_t rowbytes = (size_t)width * (size_t)channels;
    for (int y = 0; y < height; y++) {
        png_write_row(png, (png_const_bytep)(pixels + (size_t)y * rowbytes));
    }
    png_write_end(png, info);
    png_destroy_write_struct(&png, &info);
    *out_data = writer.data;
    *out_size = writer.size;
    return CIMG_OK;
}

// MARK: - JPEG

typedef struct {
    struct jpeg_error_mgr manager;  // must be first: libjpeg casts cinfo->err to this type
    jmp_buf jump;
    char *message;
    size_t message_size;
    cimg_status status;
} cimg_jpeg_error;

static cimg_status cimg_jpeg_classify(int code) {
    switch (code) {
    case JERR_BAD_PRECISION:
    case JERR_CONVERSION_NOTIMPL:
    case JERR_NOT_COMPILED:
    case JERR_NOTIMPL:
#ifdef JERR_ARITH_NOTIMPL
    case JERR_ARITH_NOTIMPL:
#endif
        return CIMG_ERR_UNSUPPORTED;
    case JERR_OUT_OF_MEMORY:
        return CIMG_ERR_NOMEM;
    default:
        return CIMG_ERR_CORRUPT;
    }
}

static void cimg_jpeg_error_exit(j_common_ptr cinfo) {
    cimg_jpeg_error *error = (cimg_jpeg_error *)cinfo->err;
    char text[JMSG_LENGTH_MAX];
    (*cinfo->err->format_message)(cinfo, text);
    cimg_set_message(error->message, error->message_size, text);
    if (error->status == CIMG_OK) error->status = cimg_jpeg_classify(cinfo->err->msg_code);
    longjmp(error->jump, 1);
}

static void cimg_jpeg_emit_message(j_common_ptr cinfo, int level) {
    if (level < 0) {
        cinfo->err->num_warnings++;
        // jpeg_mem_src reports running out of data as this warning and pads with an EOI
        // marker, which would silently yield a gray lower part: treat it as fatal.
        if (cinfo->err->msg_code == JWRN_JPEG_EOF) {
            cimg_jpeg_error *error = (cimg_jpeg_error *)cinfo->err;
            error->status = CIMG_ERR_CORRUPT;
            char text[JMSG_LENGTH_MAX];
            (*cinfo->err->format_message)(cinfo, text);
            char full[JMSG_LENGTH_MAX + 64];
            snprintf(full, sizeof full, "%s (the JPEG file is truncated)", text);
            cimg_set_message(error->message, error->message_size, full);
            longjmp(error->jump, 1);
        }
    }
    // Other warnings (extraneous bytes, …) and trace messages are ignored.
}

static void cimg_jpeg_output_message(j_common_ptr cinfo) { (void)cinfo; }

static const char *cimg_jpeg_color_space_name(J_COLOR_SPACE space) {
    switch (space) {
    case JCS_GRAYSCALE: return "grayscale";
    case JCS_RGB: return "RGB";
    case JCS_YCbCr: return "YCbCr";
    case JCS_CMYK: return "CMYK";
    case JCS_YCCK: return "YCCK";
    default: return "unknown";
    }
}

// Pillow's MULDIV255: a·b/255 rounded, in integers.
static inline int cimg_muldiv255(int a, int b) {
    int t = a * b + 128;
    return ((t >> 8) + t) >> 8;
}

cimg_status cimg_jpeg_decode(const unsigned char *data, size_t size, cimg_image *out,
                             char *message, size_t message_size) {
    cimg_set_message(message, message_size, "");
    if (out == NULL) return CIMG_ERR_ARGUMENT;
    out->width = out->height = out->channels = 0;
    out->pixels = NULL;
    if (data == NULL || size < 3 || data[0] != 0xFF || data[1] != 0xD8) {
        cimg_set_message(message, message_size, "not a JPEG signature (FF D8)");
        return CIMG_ERR_CORRUPT;
    }

    struct jpeg_decompress_struct cinfo;
    cimg_jpeg_error error;
    memset(&cinfo, 0, sizeof cinfo);
    memset(&error, 0, sizeof error);
    cinfo.err = jpeg_std_error(&error.manager);
    error.manager.error_exit = cimg_jpeg_error_exit;
    error.manager.emit_message = cimg_jpeg_emit_message;
    error.manager.output_message = cimg_jpeg_output_message;
    error.message = message;
    error.message_size = message_size;
    error.status = CIMG_OK;

    // Modified after setjmp and read after longjmp: must be volatile.
    unsigned char *volatile pixels = NULL;
    unsigned char *volatile cmyk_row = NULL;
    volatile int created = 0;

    if (setjmp(error.jump)) {
        free(pixels);
        free(cmyk_row);
        if (created) jpeg_destroy_decompress(&cinfo);
        return error.status == CIMG_OK ? CIMG_ERR_CORRUPT : error.status;
    }

    jpeg_create_decompress(&cinfo);
    created = 1;
    jpeg_mem_src(&cinfo, (const unsigned char *)data, (unsigned long)size);
    jpeg_read_header(&cinfo, TRUE);

    int channels;
    int cmyk = 0;
    switch (cinfo.jpeg_color_space) {
    case JCS_GRAYSCALE:
        cinfo.out_color_space = JCS_GRAYSCALE;
        channels = 1;
        break;
    case JCS_YCbCr:
    case JCS_RGB:
        cinfo.out_color_space = JCS_RGB;
        channels = 3;
        break;
    case JCS_CMYK:
    case JCS_YCCK:
        cinfo.out_color_space = JCS_CMYK;
        channels = 3;
        cmyk = 1;
        break;
    default: {
        char text[160];
        snprintf(text, sizeof text, "JPEG colour space %s with %d components is not supported",
                 cimg_jpeg_color_space_name(cinfo.jpeg_color_space), cinfo.num_components);
        cimg_set_message(message, message_size, text);
        error.status = CIMG_ERR_UNSUPPORTED;
        longjmp(error.jump, 1);
    }
    }
    if (!cimg_size_ok(cinfo.image_width, cinfo.image_height)) {
        char text[240];
        cimg_size_message(text, sizeof text, cinfo.image_width, cinfo.image_height);
        cimg_set_message(message, message_size, text);
        error.status = CIMG_ERR_TOO_LARGE;
        longjmp(error.jump, 1);
    }

    jpeg_start_decompress(&cinfo);
    int expected_components = cmyk ? 4 : channels;
    if (cinfo.output_components != expected_components) {
        cimg_set_message(message, message_size, "unexpected number of output components");
        error.status = CIMG_ERR_UNSUPPORTED;
        longjmp(error.jump, 1);
    }
    size_t width = cinfo.output_width;
    size_t height = cinfo.output_height;
    size_t rowbytes = width * (size_t)channels;
    pixels = (unsigned char *)malloc(rowbytes * height);
    if (cmyk) cmyk_row = (unsigned char *)malloc(width * 4);
    if (pixels == NULL || (cmyk && cmyk_row == NULL)) {
        cimg_set_message(message, message_size, "out of memory for the pixel buffer");
        error.status = CIMG_ERR_NOMEM;
        longjmp(error.jump, 1);
    }
    // Adobe CMYK JPEGs (Photoshop, Pillow) store inverted values.
    int inverted = cmyk && cinfo.saw_Adobe_marker;
    while (cinfo.output_scanline < cinfo.output_height) {
        size_t y = cinfo.output_scanline;
        if (!cmyk) {
            JSAMPROW row = pixels + y * rowbytes;
            jpeg_read_scanlines(&cinfo, &row, 1);
        } else {
            JSAMPROW row = cmyk_row;
            jpeg_read_scanlines(&cinfo, &row, 1);
            unsigned char *rgb = pixels + y * rowbytes;
            for (size_t x = 0; x < width; x++) {
                int c = cmyk_row[4 * x], m = cmyk_row[4 * x + 1];
                int yy = cmyk_row[4 * x + 2], k = cmyk_row[4 * x + 3];
                if (inverted) { c = 255 - c; m = 255 - m; yy = 255 - yy; k = 255 - k; }
                int nk = 255 - k;
                int r = nk - cimg_muldiv255(c, nk);
                int g = nk - cimg_muldiv255(m, nk);
                int b = nk - cimg_muldiv255(yy, nk);
                rgb[3 * x] = (unsigned char)(r < 0 ? 0 : r);
                rgb[3 * x + 1] = (unsigned char)(g < 0 ? 0 : g);
                rgb[3 * x + 2] = (unsigned char)(b < 0 ? 0 : b);
            }
        }
    }
    // jpeg_finish_decompress is not called: it would only read trailing markers up to EOI, and
    // (like the PNG decoder) a file whose image data is complete decodes without them.
    jpeg_destroy_decompress(&cinfo);
    free(cmyk_row);

    out->width = (int)width;
    out->height = (int)height;
    out->channels = channels;
    out->pixels = pixels;
    return CIMG_OK;
}
