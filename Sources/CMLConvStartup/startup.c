// libgomp reads OMP_WAIT_POLICY and GOMP_SPINCOUNT once, in its constructor, which runs before any
// code of mlconv's (libdnnl, which mlconv links, depends on libgomp). Functions in an executable's
// .preinit_array run before the constructors of every shared library, but also before libc has
// set `environ` (it does so in its own initialisation, from the loader's copy), so `setenv` here
// would be undone. So when the environment says nothing about libgomp's wait policy, the
// executable re-executes itself once, at once, with GOMP_SPINCOUNT added: the loader runs twice
// (about 15 ms), no library has initialised yet. The user's own setting always wins.
#include <stddef.h>
#include <string.h>
#include <unistd.h>
#include "mlconv_startup.h"

#define MLCONV_STARTUP_MARKER "MLCONV_GOMP_DEFAULT=1"

static const char *policy_source = "unset";

static int has_prefix(const char *s, const char *prefix) { return strncmp(s, prefix, strlen(prefix)) == 0; }

static void mlconv_choose_thread_wait_policy(int argc, char **argv, char **envp) {
    (void)argc;
    if (envp == NULL || argv == NULL) { return; }
    size_t count = 0;
    int marked = 0, set = 0;
    for (char **e = envp; *e != NULL; e++, count++) {
        if (has_prefix(*e, "OMP_WAIT_POLICY=") || has_prefix(*e, "GOMP_SPINCOUNT=")) { set = 1; }
        if (strcmp(*e, MLCONV_STARTUP_MARKER) == 0) { marked = 1; }
    }
    if (set) {
        policy_source = marked ? "mlconv" : "environment";
        return;
    }
    if (marked) { return; }  // re-executed, yet the setting is gone: never loop
    static char *environment[4096];
    if (count + 3 > sizeof(environment) / sizeof(environment[0])) { return; }
    for (size_t i = 0; i < count; i++) { environment[i] = envp[i]; }
    environment[count] = "GOMP_SPINCOUNT=" MLCONV_DEFAULT_GOMP_SPINCOUNT;
    environment[count + 1] = MLCONV_STARTUP_MARKER;
    environment[count + 2] = NULL;
    execve("/proc/self/exe", argv, environment);
    // No /proc, or exec refused: go on with libgomp's defaults.
}

__attribute__((section(".preinit_array"), used))
static void (*const mlconv_preinit)(int, char **, char **) = mlconv_choose_thread_wait_policy;

const char *mlconv_thread_wait_policy_source(void) { return policy_source; }
