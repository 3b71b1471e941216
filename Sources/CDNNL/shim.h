// oneDNN (Debian libdnnl-dev 2.6, OpenMP CPU runtime). The two OpenMP calls are declared here
// because clang does not see gcc's omp.h; they are provided by libgomp, which libdnnl links.
#ifndef MLCONV_CDNNL_SHIM_H
#define MLCONV_CDNNL_SHIM_H
#include <oneapi/dnnl/dnnl.h>
void omp_set_num_threads(int num_threads);
int omp_get_max_threads(void);
#endif
