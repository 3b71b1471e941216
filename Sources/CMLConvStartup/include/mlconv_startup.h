// CMLConvStartup: what the `mlconv` executable does before any library initialises (issue 12,
// thread pool behaviour). Linked into executables only (MLConvCLI): a shared library may not
// carry a .preinit_array.
#ifndef MLCONV_STARTUP_H
#define MLCONV_STARTUP_H

/// The spin count mlconv gives libgomp (oneDNN's OpenMP runtime) when the environment sets
/// neither OMP_WAIT_POLICY nor GOMP_SPINCOUNT: a worker spins about this many iterations for
/// the next parallel region, then sleeps. libgomp's own default (300,000, "active") keeps idle
/// workers spinning so long that on a busy machine they take the CPU from the thread the others
/// wait for; "passive" (0) costs a wake-up per region on an idle one. docs/PERFORMANCE.md,
/// "Thread pool", has the measurements.
#define MLCONV_DEFAULT_GOMP_SPINCOUNT "3000"

/// How libgomp's wait policy was chosen in this process: "mlconv" when the executable re-executed
/// itself with GOMP_SPINCOUNT=MLCONV_DEFAULT_GOMP_SPINCOUNT (and MLCONV_GOMP_DEFAULT=1) added,
/// "environment" when the user set OMP_WAIT_POLICY or GOMP_SPINCOUNT, "unset" when the
/// start-up code did not run (a process that is not the mlconv executable or its tests).
const char *mlconv_thread_wait_policy_source(void);

#endif
