// oneDNN (Debian libdnnl-dev 2.6, OpenMP CPU runtime). The two OpenMP calls are declared here
// because clang does not see gcc's omp.h; they are provided by libgomp, which libdnnl links.
#ifndef MLCONV_CDNNL_SHIM_H
#define MLCONV_CDNNL_SHIM_H
#include <oneapi/dnnl/dnnl.h>
#include <oneapi/dnnl/dnnl_debug.h>
void omp_set_num_threads(int num_threads);
int omp_get_max_threads(void);

// Execution-argument ids (macros that alias other macros, spelled out for Swift).
static inline int mlconv_dnnl_arg_src(void) { return DNNL_ARG_SRC; }
static inline int mlconv_dnnl_arg_src_1(void) { return DNNL_ARG_SRC_1; }
static inline int mlconv_dnnl_arg_dst(void) { return DNNL_ARG_DST; }
static inline int mlconv_dnnl_arg_weights(void) { return DNNL_ARG_WEIGHTS; }
static inline int mlconv_dnnl_arg_bias(void) { return DNNL_ARG_BIAS; }
static inline int mlconv_dnnl_arg_mean(void) { return DNNL_ARG_MEAN; }
static inline int mlconv_dnnl_arg_variance(void) { return DNNL_ARG_VARIANCE; }
static inline int mlconv_dnnl_arg_scale(void) { return DNNL_ARG_SCALE; }
static inline int mlconv_dnnl_arg_shift(void) { return DNNL_ARG_SHIFT; }
static inline int mlconv_dnnl_arg_scratchpad(void) { return DNNL_ARG_SCRATCHPAD; }
static inline int mlconv_dnnl_arg_multiple_src(int i) { return DNNL_ARG_MULTIPLE_SRC + i; }
#endif
