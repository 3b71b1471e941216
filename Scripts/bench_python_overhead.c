/* Per-call time of mlconv_predict called from C (no Python): the baseline for
 * Scripts/bench-python. Usage: bench_python_overhead MODEL ITERATIONS NAME=VALUE... where each
 * value is a double (NAME=1.5) or a comma-separated float64 multiArray (NAME=@0.1,0.2,...).
 * Prints the median microseconds per call over 5 rounds. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "mlconv.h"

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

static int cmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv) {
    if (argc < 4) { fprintf(stderr, "usage: %s MODEL ITERATIONS NAME=VALUE...\n", argv[0]); return 2; }
    mlconv_model *m = mlconv_open(argv[1], NULL);
    if (!m) { fprintf(stderr, "open: %s\n", mlconv_last_error()); return 1; }
    int iterations = atoi(argv[2]);
    size_t n = (size_t)(argc - 3);
    mlconv_feature *f = calloc(n, sizeof *f);
    int64_t *shapes = calloc(n, sizeof *shapes);
    if (!f || !shapes) return 1;
    for (size_t i = 0; i < n; i++) {
        char *arg = argv[3 + i], *eq = strchr(arg, '=');
        if (!eq) { fprintf(stderr, "bad input %s\n", arg); return 2; }
        *eq = 0;
        f[i].name = arg;
        if (eq[1] == '@') {
            double *data = calloc(4096, sizeof *data);
            if (!data) return 1;
            int64_t count = 0;
            for (char *p = eq + 2; *p && count < 4096;) {
                data[count++] = strtod(p, &p);
                if (*p == ',') p++;
            }
            shapes[i] = count;
            f[i].kind = MLCONV_KIND_MULTIARRAY;
            f[i].dtype = MLCONV_DTYPE_FLOAT64;
            f[i].rank = 1;
            f[i].shape = &shapes[i];
            f[i].data = data;
        } else {
            f[i].kind = MLCONV_KIND_DOUBLE;
            f[i].double_value = atof(eq + 1);
        }
    }
    double rounds[5];
    for (int r = 0; r < 5; r++) {
        double t0 = now();
        for (int k = 0; k < iterations; k++) {
            mlconv_result *res = NULL;
            if (mlconv_predict(m, f, n, &res) != MLCONV_OK) { fprintf(stderr, "predict: %s\n", mlconv_last_error()); return 1; }
            mlconv_result_free(res);
        }
        rounds[r] = (now() - t0) / iterations * 1e6;
    }
    qsort(rounds, 5, sizeof rounds[0], cmp);
    printf("%.1f\n", rounds[2]);
    mlconv_close(m);
    return 0;
}
