// The per-thread last-error message of the C ABI (mlconv.h: mlconv_last_error). Kept in C for
// `_Thread_local`; the Swift side (MLConvC) sets it through mlconv__set_last_error.
#include "mlconv.h"
#include "mlconv_internal.h"

#include <stdlib.h>
#include <string.h>

static _Thread_local char *last_error = NULL;

const char *mlconv_last_error(void) { return last_error ? last_error : ""; }

void mlconv__set_last_error(const char *message) {
    free(last_error);
    last_error = NULL;
    if (message && *message) {
        size_t n = strlen(message);
        char *copy = malloc(n + 1);
        if (copy) {
            memcpy(copy, message, n + 1);
            last_error = copy;
        }
    }
}
