// CXXHash: xxHash (Debian libxxhash-dev) for the `.mlbundle` checksum (XXH64) and the model cache's
// keys. An implementation detail of MLBundle (no stable API): the opaque streaming API
// (XXH64_createState / XXH64_reset / XXH64_update / XXH64_digest / XXH64_copyState) and the
// one-shot XXH64, imported into Swift as they are.
#ifndef MLCONV_CXXHASH_SHIM_H
#define MLCONV_CXXHASH_SHIM_H

#include <xxhash.h>

#endif
