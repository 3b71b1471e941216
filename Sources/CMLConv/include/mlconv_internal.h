/* Internal to libmlconv_c: not part of the C ABI (mlconv.h). */
#ifndef MLCONV_INTERNAL_H
#define MLCONV_INTERNAL_H
/* Sets (copies) the calling thread's last error; NULL or "" clears it. */
void mlconv__set_last_error(const char *message);
#endif
