/*
 * mlconv.h — the C ABI of mlconv (library `libmlconv_c.so`, SwiftPM product `mlconv_c`:
 * `swift build -c release --product mlconv_c`).
 *
 * Opens a model (.mlbundle, .mlmodel, .mlpackage, Keras .h5 / .keras), describes it as JSON and
 * predicts named feature values, as Core ML's MLModel.prediction(from:) does.
 *
 * ERRORS. Functions returning `int` return MLCONV_OK (0) on success and a nonzero
 * `mlconv_status` on failure; functions returning a pointer return NULL on failure. After a
 * failure, mlconv_last_error() returns a UTF-8 message naming the file / feature / layer, what
 * was expected, what was found and what to do. The message is per thread: it belongs to the
 * library, stays valid until the next mlconv_* call on the same thread, and must not be freed.
 *
 * OWNERSHIP.
 *   - mlconv_model*: from mlconv_open; release with mlconv_close (exactly once).
 *   - mlconv_result*: from mlconv_predict / mlconv_predict_batch; release with
 *     mlconv_result_free (exactly once each). Every pointer an accessor returns (names, shapes,
 *     data, strings) is owned by the result and valid until mlconv_result_free of that result.
 *     A result stays valid after mlconv_close of its model.
 *   - char* returned by mlconv_describe and mlconv_compile_model: malloc'd, NUL-terminated,
 *     owned by the caller; release with mlconv_string_free.
 *   - Inputs (mlconv_feature arrays and everything they point to, paths, option strings) are
 *     borrowed for the duration of the call only; the library copies what it keeps.
 *
 * THREADS. A model is immutable after mlconv_open: any number of threads may call
 * mlconv_predict / mlconv_predict_batch / mlconv_describe on the same model at once.
 * mlconv_close must not race with other calls on that model. Results are not shared state:
 * read a result from any thread, free it once.
 *
 * ADDITIONS to this header are only ever appended (new functions, new enum values); the layout
 * of mlconv_feature and existing values do not change.
 */
#ifndef MLCONV_H
#define MLCONV_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Version of this ABI; mlconv_abi_version() returns the library's. */
#define MLCONV_ABI_VERSION 1

typedef struct mlconv_model mlconv_model;   /* opaque */
typedef struct mlconv_result mlconv_result; /* opaque */

/* Status codes. */
typedef enum mlconv_status {
    MLCONV_OK = 0,
    MLCONV_ERROR_INVALID_ARGUMENT = 1, /* NULL pointer, bad enum value, malformed options JSON */
    MLCONV_ERROR_MODEL = 2,            /* the model file cannot be read, converted or compiled */
    MLCONV_ERROR_FEATURE = 3,          /* an input is missing, of the wrong type or shape */
    MLCONV_ERROR_PREDICTION = 4,       /* the model failed while predicting */
    MLCONV_ERROR_UNSUPPORTED = 5       /* a model type or feature kind this mlconv refuses */
} mlconv_status;

/* Kinds of feature values (Core ML's FeatureType). */
typedef enum mlconv_feature_kind {
    MLCONV_KIND_MULTIARRAY = 1, /* shape + data in `dtype` */
    MLCONV_KIND_INT64 = 2,      /* int64_value */
    MLCONV_KIND_DOUBLE = 3,     /* double_value */
    MLCONV_KIND_STRING = 4,     /* string_value (UTF-8) */
    MLCONV_KIND_DICTIONARY = 5, /* string_value: JSON object, key → number; keys of an Int64-keyed
                                   dictionary are decimal integers ("3": 0.5) */
    MLCONV_KIND_SEQUENCE = 6,   /* string_value: JSON array of integers or of strings */
    MLCONV_KIND_IMAGE = 7       /* input: a PNG/JPEG file (string_value = path, data = NULL) or raw
                                   pixels (data, dtype UINT8, rank 3, shape [height, width, channels],
                                   channels 1 or 3, row-major interleaved). Output: raw pixels as above.
                                   Fitted to the model's size with options_json {"crop": ...}. */
} mlconv_feature_kind;

/* Element types of multi-array data and image pixels. FLOAT16 is IEEE binary16 (numpy float16). */
typedef enum mlconv_dtype {
    MLCONV_DTYPE_FLOAT32 = 1,
    MLCONV_DTYPE_FLOAT64 = 2,
    MLCONV_DTYPE_FLOAT16 = 3,
    MLCONV_DTYPE_INT32 = 4,
    MLCONV_DTYPE_INT64 = 5,
    MLCONV_DTYPE_UINT8 = 6
} mlconv_dtype;

/*
 * One named input feature value. Fields a kind does not use are ignored (set them to 0/NULL).
 *   name          UTF-8 feature name (as in mlconv_describe's "inputs").
 *   kind          mlconv_feature_kind.
 *   dtype         MULTIARRAY: element type of `data` (converted to the model's declared type);
 *                 IMAGE with pixels: MLCONV_DTYPE_UINT8.
 *   rank, shape   MULTIARRAY / IMAGE pixels: `rank` dimensions, row-major. A multi-array's shape
 *                 is the model's (Core ML's shape for .mlmodel inputs, Keras NHWC with a leading
 *                 batch of 1 for Keras models; a leading 1 may be omitted).
 *   data          MULTIARRAY: product(shape) elements of `dtype`; IMAGE: pixels, or NULL for a file.
 *   int64_value   INT64.
 *   double_value  DOUBLE.
 *   string_value  STRING: the value; DICTIONARY / SEQUENCE: JSON; IMAGE: file path when data is NULL.
 *   options_json  IMAGE: NULL or a JSON object:
 *                   "crop": "center" (default; scale to cover, crop the centre — Vision's
 *                           centerCrop), "fit" (scale to fit, pad — scaleFit), "fill" (stretch —
 *                           scaleFill);
 *                   "color_space": "RGB" (default for 3 channels), "BGR", "Grayscale" — the
 *                           channel order of raw `data` pixels.
 *                 Other kinds: NULL.
 */
typedef struct mlconv_feature {
    const char *name;
    int32_t kind;
    int32_t dtype;
    int32_t rank;
    int32_t reserved; /* set to 0 */
    const int64_t *shape;
    const void *data;
    int64_t int64_value;
    double double_value;
    const char *string_value;
    const char *options_json;
} mlconv_feature;

/* The ABI version of the loaded library (MLCONV_ABI_VERSION it was built with). */
int32_t mlconv_abi_version(void);

/* The last error message on this thread (see ERRORS), or "" when the last call succeeded. */
const char *mlconv_last_error(void);

/*
 * Opens a model: .mlbundle (memory-mapped), .mlmodel or .mlpackage (decoded; neural networks
 * compiled), Keras .h5 / .keras (converted and compiled). Conversions are cached on disk keyed
 * by the file's content hash. options_json: NULL or a JSON object with
 *   "cache_dir":  string — where converted bundles are cached (default $MLCONV_CACHE_DIR,
 *                 else $XDG_CACHE_HOME/mlconv, else ~/.cache/mlconv);
 *   "use_cache":  bool (default true) — false converts in memory every time;
 *   "reference":  bool (default false) — plain reference kernels, graph as stored;
 *   "threads":    integer ≥ 1 — CPU threads for kernels.
 * Returns NULL on error (mlconv_last_error).
 */
mlconv_model *mlconv_open(const char *path, const char *options_json);

/* Releases a model (NULL is ignored). */
void mlconv_close(mlconv_model *model);

/*
 * The model description as JSON (caller frees with mlconv_string_free), NULL on error:
 *   {"inputs": [FEATURE…], "outputs": [FEATURE…], "predicted_feature_name": str|null,
 *    "predicted_probabilities_name": str|null, "class_labels": [str|int…]|null,
 *    "metadata": {"author","license","short_description","version_string", "user_defined": {…}},
 *    "model_type": str, "specification_version": int|null}
 *   FEATURE = {"name", "type": "multiArray"|"int64"|"double"|"string"|"dictionary"|"sequence"|"image",
 *              "optional": bool, "short_description": str,
 *              multiArray: "shape": [int] (-1: any size), "data_type": "float32"|"float64"|"float16"|"int32",
 *                          "shape_range": [[min,max|-1]…] (flexible shapes) | "enumerated_shapes": [[int]…];
 *              image: "width", "height", "color_space": "RGB"|"BGR"|"Grayscale",
 *                     "size_range": {"width": [min,max|-1], "height": [min,max|-1]} or
 *                     "enumerated_sizes": [[width,height]…] when flexible;
 *              dictionary: "key_type": "string"|"int64"; sequence: "element_type": "int64"|"string"}
 */
char *mlconv_describe(const mlconv_model *model);

/*
 * Predicts one row. inputs: n features (every non-optional input of the description).
 * On success *out is a new result (free with mlconv_result_free) holding every output.
 */
int mlconv_predict(const mlconv_model *model, const mlconv_feature *inputs, size_t n,
                   mlconv_result **out);

/*
 * Predicts `batch` rows (Core ML's batch prediction). inputs holds the rows' features one row
 * after the other; counts[i] is the number of features of row i. out must have room for `batch`
 * pointers; on success out[i] is row i's result (each freed with mlconv_result_free). On error
 * no result is returned (out is left unset).
 */
int mlconv_predict_batch(const mlconv_model *model, const mlconv_feature *inputs,
                         const size_t *counts, size_t batch, mlconv_result **out);

/* Releases a result (NULL is ignored). */
void mlconv_result_free(mlconv_result *result);

/* Accessors of a result's outputs, indexed 0 ..< count in the description's output order.
 * An index out of range returns 0 / NULL. */
size_t mlconv_result_count(const mlconv_result *result);
/* Index of the output named `name`, or -1. */
int64_t mlconv_result_index(const mlconv_result *result, const char *name);
const char *mlconv_result_name(const mlconv_result *result, size_t index);
int32_t mlconv_result_kind(const mlconv_result *result, size_t index);   /* mlconv_feature_kind */
/* MULTIARRAY: the declared element type (FLOAT32, FLOAT64, FLOAT16, INT32); IMAGE: UINT8. */
int32_t mlconv_result_dtype(const mlconv_result *result, size_t index);
int32_t mlconv_result_rank(const mlconv_result *result, size_t index);
const int64_t *mlconv_result_shape(const mlconv_result *result, size_t index);
/* MULTIARRAY / IMAGE: product(shape) row-major elements of mlconv_result_dtype. */
const void *mlconv_result_data(const mlconv_result *result, size_t index);
int64_t mlconv_result_int64(const mlconv_result *result, size_t index);
double mlconv_result_double(const mlconv_result *result, size_t index);
/* STRING: the value; DICTIONARY / SEQUENCE: JSON (as for inputs); IMAGE: the colour space
 * ("RGB", "BGR", "Grayscale"); MULTIARRAY / INT64 / DOUBLE: NULL. */
const char *mlconv_result_string(const mlconv_result *result, size_t index);

/*
 * Compiles a model to an .mlbundle (as Core ML's MLModel.compileModel(at:)): converts a Keras
 * file or .mlmodel neural network and writes the bundle atomically into the cache (see
 * mlconv_open's options; "cache_dir" applies). Returns the bundle's path (mlconv_string_free),
 * NULL on error. An .mlbundle returns its own path. Core ML model types that are not neural
 * networks (trees, GLMs, pipelines, …) have no bundle form: MLCONV_ERROR_UNSUPPORTED (open the
 * .mlmodel itself with mlconv_open).
 */
char *mlconv_compile_model(const char *path, const char *options_json);

/* Releases a string returned by mlconv_describe / mlconv_compile_model (NULL is ignored). */
void mlconv_string_free(char *string);

#ifdef __cplusplus
}
#endif

#endif /* MLCONV_H */
