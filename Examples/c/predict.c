/* A C client of libmlconv_c (Sources/CMLConv/include/mlconv.h): opens a model, prints its
 * description, predicts the digits CNN on an all-zero 8×8 image and prints the outputs.
 * Built and run by Scripts/check-cabi. Usage: predict MODEL */
#include "mlconv.h"

#include <stdio.h>

int main(int argc, char **argv) {
    if (argc != 2) { fprintf(stderr, "usage: %s MODEL\n", argv[0]); return 2; }
    mlconv_model *model = mlconv_open(argv[1], NULL);
    if (!model) { fprintf(stderr, "open: %s\n", mlconv_last_error()); return 1; }

    char *description = mlconv_describe(model);            /* ours: free it */
    if (!description) { fprintf(stderr, "describe: %s\n", mlconv_last_error()); mlconv_close(model); return 1; }
    printf("%s\n", description);
    mlconv_string_free(description);

    float pixels[64] = {0};
    int64_t shape[4] = {1, 8, 8, 1};
    mlconv_feature input = {0};
    input.name = "digit";
    input.kind = MLCONV_KIND_MULTIARRAY;
    input.dtype = MLCONV_DTYPE_FLOAT32;
    input.rank = 4;
    input.shape = shape;
    input.data = pixels;                                      /* borrowed for the call only */

    mlconv_result *result = NULL;
    if (mlconv_predict(model, &input, 1, &result) != MLCONV_OK) {
        fprintf(stderr, "predict: %s\n", mlconv_last_error());
        mlconv_close(model);
        return 1;
    }
    for (size_t i = 0; i < mlconv_result_count(result); i++) {
        printf("%s: kind %d dtype %d rank %d", mlconv_result_name(result, i), mlconv_result_kind(result, i),
               mlconv_result_dtype(result, i), mlconv_result_rank(result, i));
        if (mlconv_result_kind(result, i) == MLCONV_KIND_MULTIARRAY && mlconv_result_dtype(result, i) == MLCONV_DTYPE_FLOAT32) {
            const int64_t *s = mlconv_result_shape(result, i);
            int64_t n = 1;
            for (int d = 0; d < mlconv_result_rank(result, i); d++) n *= s[d];
            const float *v = mlconv_result_data(result, i);  /* owned by the result */
            for (int64_t k = 0; k < n && k < 10; k++) printf(" %.6g", v[k]);
        }
        printf("\n");
    }
    mlconv_result_free(result);
    mlconv_close(model);
    return 0;
}
