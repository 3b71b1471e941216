// CZip: libzip (Debian libzip-dev) for reading Keras 3 `.keras` archives. An implementation
// detail of KerasFrontend (no stable API): `zip.h` imports into Swift as is; the few macros
// Swift cannot import are wrapped by `static inline` functions named `mlconv_*`.
#ifndef MLCONV_CZIP_SHIM_H
#define MLCONV_CZIP_SHIM_H

#include <zip.h>

static inline int mlconv_ZIP_RDONLY(void) { return ZIP_RDONLY; }
static inline int mlconv_ZIP_CHECKCONS(void) { return ZIP_CHECKCONS; }
static inline zip_flags_t mlconv_ZIP_FL_ENC_GUESS(void) { return ZIP_FL_ENC_GUESS; }
static inline zip_flags_t mlconv_ZIP_FL_NOCASE(void) { return ZIP_FL_NOCASE; }
static inline zip_uint64_t mlconv_ZIP_STAT_SIZE(void) { return ZIP_STAT_SIZE; }
static inline zip_uint64_t mlconv_ZIP_STAT_COMP_SIZE(void) { return ZIP_STAT_COMP_SIZE; }
static inline zip_uint64_t mlconv_ZIP_STAT_NAME(void) { return ZIP_STAT_NAME; }
static inline zip_uint64_t mlconv_ZIP_STAT_ENCRYPTION_METHOD(void) { return ZIP_STAT_ENCRYPTION_METHOD; }
static inline zip_uint16_t mlconv_ZIP_EM_NONE(void) { return ZIP_EM_NONE; }

#endif // MLCONV_CZIP_SHIM_H
