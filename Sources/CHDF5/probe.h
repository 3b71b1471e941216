// CHDF5 probe: libhdf5 run in a child process before mlconv trusts it in its own (issue 13).
//
// libhdf5 1.10 can crash (SIGSEGV in the global heap), abort or loop for ever on a damaged file,
// inside the library, where no error can be returned (docs/RELIABILITY.md). Before mlconv opens
// a file in its own process, `mlconv_probe_file_isolated` forks a child that opens the file and
// reads everything mlconv could read from it: it visits every object once, by name as mlconv's
// readers reach them (through hard and soft links; each object once, so cyclic files end; past
// a damaged object to the rest), reads every attribute of every object
// and every dataset's data with the memory types mlconv's readers use (float datasets as native
// float; float attributes as native double; integers as native int64; strings as variable- or
// fixed-length strings). The parent waits with a time limit: a child killed by a signal, or
// exiting with a status other than 0, means libhdf5 cannot read the file safely; a child still
// running at the limit is killed and means libhdf5 loops on it. A child that merely gets an
// error from libhdf5 exits 0: the parent then gets the same error itself, as a typed error.
//
// Plain C on purpose: after `fork` in a multithreaded process only async-signal-safe work is
// sure to be safe. The child calls libhdf5 (the caller holds mlconv's HDF5 lock, so no other
// thread was inside libhdf5 when the process forked) and malloc (glibc makes malloc safe after
// fork), and ends with `_exit`, which runs no atexit handlers (no LeakSanitizer report, no
// Swift or libhdf5 clean-up in the child).
#ifndef MLCONV_CHDF5_PROBE_H
#define MLCONV_CHDF5_PROBE_H

#include "shim.h"
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif
#include <poll.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/// What `mlconv_probe_file_isolated` found.
typedef enum mlconv_probe_outcome {
    /// The child read the whole file (or got an ordinary libhdf5 error) and exited normally.
    MLCONV_PROBE_OK = 0,
    /// The child was killed by signal `detail` (SIGSEGV, SIGBUS, SIGABRT, ...).
    MLCONV_PROBE_SIGNALED = 1,
    /// The child exited with status `detail` (a sanitizer's report, an allocation failure).
    MLCONV_PROBE_EXITED = 2,
    /// The child was still running after the time limit and was killed.
    MLCONV_PROBE_TIMED_OUT = 3,
    /// No child could be started (`fork` failed with errno `detail`).
    MLCONV_PROBE_NOT_RUN = 4,
    /// libhdf5 needed more than `max_bytes` of memory of its own to read the file (a damaged
    /// variable-length string can claim up to 4 GB, which libhdf5 allocates and clears);
    /// `detail` is the growth seen, in MiB.
    MLCONV_PROBE_TOO_MUCH_MEMORY = 5,
} mlconv_probe_outcome;

/// The child's exit status for MLCONV_PROBE_TOO_MUCH_MEMORY (the growth goes in a pipe-less
/// way: the status only says "over"; the parent reads the child's peak from `wait4`).
#define MLCONV_PROBE_EXIT_MEMORY 86

typedef struct mlconv_probe_walk {
    /// Data larger than this many bytes (in memory) is not read: mlconv refuses it anyway
    /// (`--max-memory`), before reading it.
    uint64_t max_bytes;
    /// The child's peak resident set (KiB, `getrusage`) when it started: what it shares with
    /// the parent. Growth beyond it is libhdf5's.
    long start_rss_kib;
} mlconv_probe_walk;

/// Room the child has beyond the memory limit, for libhdf5's own structures and glibc's malloc
/// (which reserves 128 MiB of address space when a thread needs a new arena): the limit is the
/// most one allocation a file asks for may take, not what reading a whole file may use.
#define MLCONV_PROBE_ROOM_BYTES (256ull << 20)

/// Ends the child with MLCONV_PROBE_EXIT_MEMORY once libhdf5's memory has grown past the limit
/// (and the room).
static inline void mlconv_probe_check_memory(const mlconv_probe_walk *walk) {
    struct rusage usage;
    if (getrusage(RUSAGE_SELF, &usage) != 0) { return; }
    long grown = usage.ru_maxrss - walk->start_rss_kib;
    if (walk->max_bytes > UINT64_MAX - MLCONV_PROBE_ROOM_BYTES) { return; }
    if (grown > 0 && (uint64_t)grown > (walk->max_bytes + MLCONV_PROBE_ROOM_BYTES) / 1024) { _exit(MLCONV_PROBE_EXIT_MEMORY); }
}

static inline herr_t mlconv_probe_resource_error(unsigned n, const H5E_error2_t *record, void *data) {
    (void)n;
    // libhdf5 reports a failed malloc as major H5E_RESOURCE (H5E_NOSPACE, ...) or, in its
    // metadata cache, as minor H5E_CANTALLOC under H5E_CACHE ("memory allocation failed for
    // on disk image buffer"). The file is opened read-only, so no file-space allocation fails.
    if (record->maj_num == H5E_RESOURCE || record->min_num == H5E_CANTALLOC || record->min_num == H5E_NOSPACE) {
        *(int *)data = 1;
    }
    return 0;
}

/// After a failed read: a failed allocation (the address-space limit of the child, see
/// `mlconv_probe_fork`) means libhdf5 needs more memory than allowed. Leaves the error stack.
static inline void mlconv_probe_check_allocation_failure_keeping_stack(void) {
    int out_of_memory = 0;
    H5Ewalk2(H5E_DEFAULT, H5E_WALK_DOWNWARD, mlconv_probe_resource_error, &out_of_memory);
    if (out_of_memory) { _exit(MLCONV_PROBE_EXIT_MEMORY); }
}

/// As `mlconv_probe_check_allocation_failure_keeping_stack`, then empties the error stack.
static inline void mlconv_probe_check_allocation_failure(void) {
    mlconv_probe_check_allocation_failure_keeping_stack();
    H5Eclear2(H5E_DEFAULT);
}

/// Reads attribute or dataset data of file type `type` and dataspace `space` with `read`, as
/// mlconv's readers would. Failures are ignored: the parent reports them.
static inline void mlconv_probe_read_data(hid_t object, int is_attribute, const mlconv_probe_walk *walk) {
    hid_t type = is_attribute ? H5Aget_type(object) : H5Dget_type(object);
    if (type < 0) { return; }
    hid_t space = is_attribute ? H5Aget_space(object) : H5Dget_space(object);
    if (space < 0) { H5Tclose(type); return; }
    hssize_t points = H5Sget_simple_extent_npoints(space);
    H5T_class_t type_class = H5Tget_class(type);
    hid_t memory = -1;
    int owned = 0, variable = 0;
    size_t element = 0;
    if (type_class == H5T_FLOAT) {
        memory = is_attribute ? H5T_NATIVE_DOUBLE : H5T_NATIVE_FLOAT;
        element = is_attribute ? sizeof(double) : sizeof(float);
    } else if (type_class == H5T_INTEGER) {
        memory = H5T_NATIVE_INT64;
        element = sizeof(int64_t);
    } else if (type_class == H5T_STRING) {
        memory = H5Tcopy(H5T_C_S1);
        owned = memory >= 0;
        variable = H5Tis_variable_str(type) > 0;
        if (memory >= 0) {
            if (variable) {
                H5Tset_size(memory, H5T_VARIABLE);
                element = sizeof(char *);
            } else {
                element = H5Tget_size(type);
                if (element == 0 || H5Tset_size(memory, element) < 0) { element = 0; }
            }
            H5Tset_cset(memory, H5Tget_cset(type));
        }
    }
    if (memory >= 0 && element > 0 && points > 0 &&
        (uint64_t)points <= walk->max_bytes / element) {
        void *buffer = calloc((size_t)points, element);
        if (buffer != NULL) {
            herr_t status = is_attribute ? H5Aread(object, memory, buffer)
                                         : H5Dread(object, memory, H5S_ALL, H5S_ALL, H5P_DEFAULT, buffer);
            if (status < 0) { mlconv_probe_check_allocation_failure(); }
            if (status >= 0 && variable) { mlconv_reclaim_vlen(memory, space, buffer); }
            free(buffer);
            mlconv_probe_check_memory(walk);
        }
    }
    if (owned) { H5Tclose(memory); }
    H5Sclose(space);
    H5Tclose(type);
}

static inline herr_t mlconv_probe_attribute(hid_t location, const char *name, const H5A_info_t *info, void *data) {
    (void)info;
    hid_t attribute = H5Aopen(location, name, H5P_DEFAULT);
    if (attribute >= 0) {
        mlconv_probe_read_data(attribute, 1, (const mlconv_probe_walk *)data);
        H5Aclose(attribute);
    }
    return 0;
}

static inline void mlconv_probe_object(hid_t object, int is_dataset, mlconv_probe_walk *walk) {
    hsize_t position = 0;
    H5Aiterate2(object, H5_INDEX_NAME, H5_ITER_INC, &position, mlconv_probe_attribute, walk);
    if (is_dataset) { mlconv_probe_read_data(object, 0, walk); }
}

/// Objects already walked, by identity (`mlconv_object_identity_by_name`): an open-addressing set
/// of 128-bit keys, so that hard links to an ancestor and soft-link cycles end.
typedef struct mlconv_probe_seen {
    uint64_t *keys;  // 2 per slot; a slot of two zeros is empty
    size_t slots, used;
} mlconv_probe_seen;

/// Adds `key` to `seen`; returns 1 if it was new, 0 if already there (or no memory: treated as
/// seen, which ends the walk there).
static inline int mlconv_probe_seen_insert(mlconv_probe_seen *seen, const uint64_t key[2]) {
    if (key[0] == 0 && key[1] == 0) { return 1; }
    if (2 * (seen->used + 1) > seen->slots) {
        size_t slots = seen->slots ? seen->slots * 2 : 1024;
        uint64_t *keys = calloc(slots * 2, sizeof(uint64_t));
        if (keys == NULL) { return 0; }
        for (size_t i = 0; i < seen->slots; i++) {
            uint64_t *k = seen->keys + 2 * i;
            if (k[0] == 0 && k[1] == 0) { continue; }
            size_t j = (size_t)((k[0] * 0x9E3779B97F4A7C15ull) ^ k[1]) & (slots - 1);
            while (keys[2 * j] != 0 || keys[2 * j + 1] != 0) { j = (j + 1) & (slots - 1); }
            keys[2 * j] = k[0];
            keys[2 * j + 1] = k[1];
        }
        free(seen->keys);
        seen->keys = keys;
        seen->slots = slots;
    }
    size_t j = (size_t)((key[0] * 0x9E3779B97F4A7C15ull) ^ key[1]) & (seen->slots - 1);
    while (seen->keys[2 * j] != 0 || seen->keys[2 * j + 1] != 0) {
        if (seen->keys[2 * j] == key[0] && seen->keys[2 * j + 1] == key[1]) { return 0; }
        j = (j + 1) & (seen->slots - 1);
    }
    seen->keys[2 * j] = key[0];
    seen->keys[2 * j + 1] = key[1];
    seen->used += 1;
    return 1;
}

typedef struct mlconv_probe_group_walk {
    mlconv_probe_walk *walk;
    mlconv_probe_seen *seen;
    hid_t group;
    int depth;
} mlconv_probe_group_walk;

static inline void mlconv_probe_group(hid_t group, mlconv_probe_walk *walk, mlconv_probe_seen *seen, int depth);

static inline int mlconv_probe_link(const char *name, void *data) {
    mlconv_probe_group_walk *at = (mlconv_probe_group_walk *)data;
    hid_t group = at->group;
    // As mlconv's readers reach objects: by name, following soft links. A damaged object is
    // skipped (after checking that libhdf5 did not run out of memory on it), not the end of
    // the walk: the readers may still reach the objects after it.
    H5O_type_t type = H5O_TYPE_UNKNOWN;
    uint64_t identity[2] = { 0, 0 };
    if (mlconv_object_type_by_name(group, name, &type) < 0 ||
        mlconv_object_identity_by_name(group, name, identity) < 0) {
        mlconv_probe_check_allocation_failure();
        return 0;
    }
    if (!mlconv_probe_seen_insert(at->seen, identity)) { return 0; }
    hid_t object = H5Oopen(group, name, H5P_DEFAULT);
    if (object < 0) {
        mlconv_probe_check_allocation_failure();
        return 0;
    }
    mlconv_probe_object(object, type == H5O_TYPE_DATASET, at->walk);
    if (type == H5O_TYPE_GROUP) {
        mlconv_probe_group(object, at->walk, at->seen, at->depth + 1);
    }
    H5Oclose(object);
    return 0;
}

/// Probes every link of `group` (in name order), and the groups below it, to a depth of 256.
static inline void mlconv_probe_group(hid_t group, mlconv_probe_walk *walk, mlconv_probe_seen *seen, int depth) {
    if (depth > 256) { return; }
    mlconv_probe_group_walk at = { walk, seen, group, depth };
    if (mlconv_iterate_link_names(group, H5_INDEX_NAME, mlconv_probe_link, &at) < 0) {
        mlconv_probe_check_allocation_failure();
    }
}

/// The child's work: open the file (`path`, or the in-memory `image` of `image_size` bytes when
/// `image` is not NULL, named `path`), visit every object, read what mlconv would read.
static inline void mlconv_probe_walk_file(const char *path, const void *image, size_t image_size,
                                          uint64_t max_bytes) {
    mlconv_silence_error_printing();
    hid_t fapl = mlconv_create_read_only_fapl();
    if (fapl < 0) { return; }
    if (image != NULL) {
        if (H5Pset_fapl_core(fapl, 1 << 20, 0) < 0 ||
            H5Pset_file_image(fapl, (void *)image, image_size) < 0) {
            H5Pclose(fapl);
            return;
        }
    }
    hid_t file = H5Fopen(path, H5F_ACC_RDONLY, fapl);
    H5Pclose(fapl);
    if (file < 0) { return; }
    struct rusage usage;
    long start = getrusage(RUSAGE_SELF, &usage) == 0 ? usage.ru_maxrss : 0;
    mlconv_probe_walk walk = { max_bytes, start };
    hid_t root = H5Gopen2(file, "/", H5P_DEFAULT);
    if (root >= 0) {
        mlconv_probe_seen seen = { NULL, 0, 0 };
        uint64_t identity[2] = { 0, 0 };
        if (mlconv_object_identity_by_name(root, ".", identity) >= 0) { mlconv_probe_seen_insert(&seen, identity); }
        mlconv_probe_object(root, 0, &walk);
        mlconv_probe_group(root, &walk, &seen, 0);
        free(seen.keys);
        H5Gclose(root);
    } else {
        mlconv_probe_check_allocation_failure();
    }
    H5Fclose(file);
}

/// libFuzzer and the sanitizers install handlers and a death callback that would report the
/// child's crash as the parent's (and write a crash artifact); the child wants the plain
/// default: die of the signal, and let the parent decide.
extern void __sanitizer_set_death_callback(void (*callback)(void)) __attribute__((weak));

/// The child's stderr also goes to /dev/null: what a dying libhdf5 prints there (glibc's
/// "free(): invalid pointer", a sanitizer's report) would come before mlconv's typed error, which
/// says what happened. MLCONV_PROBE_STDERR=1 in the environment keeps it (for fuzzing).
static inline void mlconv_probe_child_defaults(void) {
    const int signals[] = { SIGSEGV, SIGBUS, SIGABRT, SIGFPE, SIGILL, SIGTRAP, SIGALRM, SIGINT, SIGTERM, SIGPIPE };
    for (size_t i = 0; i < sizeof(signals) / sizeof(signals[0]); i++) { signal(signals[i], SIG_DFL); }
    if (__sanitizer_set_death_callback != NULL) { __sanitizer_set_death_callback(NULL); }
    const char *keep = getenv("MLCONV_PROBE_STDERR");
    if (keep == NULL || strcmp(keep, "1") != 0) {
        int null_fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
        if (null_fd >= 0) {
            dup2(null_fd, STDERR_FILENO);
            if (null_fd != STDERR_FILENO) { close(null_fd); }
        }
    }
}

/// The process's address space now, in bytes (/proc/self/statm, first field); 0 if unknown.
static inline long mlconv_probe_virtual_bytes(void) {
    long virtual_bytes = 0;
    FILE *statm = fopen("/proc/self/statm", "r");
    if (statm != NULL) {
        long pages = 0;
        if (fscanf(statm, "%ld", &pages) == 1 && pages > 0) { virtual_bytes = pages * sysconf(_SC_PAGESIZE); }
        fclose(statm);
    }
    return virtual_bytes;
}

/// Forks the child of a probe. In the child (return value 0): default signal handling, death
/// with the parent, and an address-space limit of the process's size plus `max_bytes` and
/// MLCONV_PROBE_ROOM_BYTES, so that an allocation past the limit fails at
/// once instead of being made and cleared (a damaged vlen length claims up to 4 GiB). In the parent:
/// the child's pid, or -1 with errno set.
static inline pid_t mlconv_probe_fork(uint64_t max_bytes) {
    long virtual_bytes = mlconv_probe_virtual_bytes();
    pid_t parent = getpid();
    pid_t child = fork();
    if (child != 0) { return child; }
    mlconv_probe_child_defaults();
#ifdef __linux__
    // A parent killed while it waits (kill -9, a fuzzer's time-out) takes the child with it:
    // a child looping in libhdf5 must not outlive it.
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) { _exit(0); }
#endif
    if (virtual_bytes > 0 && max_bytes < UINT64_MAX / 4 && (uint64_t)virtual_bytes < UINT64_MAX / 4) {
        struct rlimit limit;
        if (getrlimit(RLIMIT_AS, &limit) == 0) {
            rlim_t wanted = (rlim_t)((uint64_t)virtual_bytes + max_bytes + MLCONV_PROBE_ROOM_BYTES);
            if (limit.rlim_max == RLIM_INFINITY || wanted < limit.rlim_max) {
                limit.rlim_cur = wanted;
                setrlimit(RLIMIT_AS, &limit);
            }
        }
    }
    return 0;
}

/// Waits at most `timeout_ms` milliseconds for the probe's `child` and turns how it ended into
/// an outcome (`detail` as for `mlconv_probe_file_isolated`); a child still running at the limit
/// is killed.
static inline mlconv_probe_outcome mlconv_probe_wait(pid_t child, int64_t timeout_ms, int *detail) {
    struct timespec start, now;
    clock_gettime(CLOCK_MONOTONIC, &start);
    long pause_ns = 20000;  // 0.02 ms, doubling up to 20 ms
    for (;;) {
        int status = 0;
        struct rusage usage;
        memset(&usage, 0, sizeof usage);
        pid_t done = wait4(child, &status, WNOHANG, &usage);
        if (done == child) {
            if (WIFSIGNALED(status)) { *detail = WTERMSIG(status); return MLCONV_PROBE_SIGNALED; }
            if (WIFEXITED(status) && WEXITSTATUS(status) == MLCONV_PROBE_EXIT_MEMORY) {
                *detail = (int)(usage.ru_maxrss / 1024);
                return MLCONV_PROBE_TOO_MUCH_MEMORY;
            }
            if (WIFEXITED(status) && WEXITSTATUS(status) != 0) { *detail = WEXITSTATUS(status); return MLCONV_PROBE_EXITED; }
            return MLCONV_PROBE_OK;
        }
        if (done < 0 && errno != EINTR) {
            // Someone else reaped the child (a SIGCHLD handler set to SIG_IGN): no verdict.
            *detail = errno;
            return MLCONV_PROBE_NOT_RUN;
        }
        clock_gettime(CLOCK_MONOTONIC, &now);
        int64_t elapsed_ms = (int64_t)(now.tv_sec - start.tv_sec) * 1000 + (now.tv_nsec - start.tv_nsec) / 1000000;
        if (elapsed_ms >= timeout_ms) {
            kill(child, SIGKILL);
            while (waitpid(child, &status, 0) < 0 && errno == EINTR) {}
            *detail = (int)(timeout_ms / 1000);
            return MLCONV_PROBE_TIMED_OUT;
        }
        struct timespec pause = { 0, pause_ns };
        nanosleep(&pause, NULL);
        if (pause_ns < 20000000) { pause_ns *= 2; }
    }
}

/// Reads the file at `path` (or the in-memory `image`, see `mlconv_probe_walk_file`) with libhdf5
/// in a child process and waits for it at most `timeout_ms` milliseconds. Data larger than
/// `max_bytes` is not read, and a child whose memory grows by more than `max_bytes` stops.
/// Returns the outcome; `detail` receives the signal, exit status, growth in MiB or errno it
/// names. Call with mlconv's HDF5 lock held.
static inline mlconv_probe_outcome mlconv_probe_file_isolated(const char *path, const void *image, size_t image_size,
                                                              uint64_t max_bytes, int64_t timeout_ms, int *detail) {
    *detail = 0;
    pid_t child = mlconv_probe_fork(max_bytes);
    if (child < 0) {
        *detail = errno;
        return MLCONV_PROBE_NOT_RUN;
    }
    if (child == 0) {
        mlconv_probe_walk_file(path, image, image_size, max_bytes);
        _exit(0);
    }
    return mlconv_probe_wait(child, timeout_ms, detail);
}

/// The child's exit status when libhdf5 refused the read cleanly (an ordinary error); the pipe then
/// carries libhdf5's error stack, one record per entry.
#define MLCONV_PROBE_EXIT_READ_FAILED 87

/// Writes all `size` bytes of `data` to `fd`; 0 on success.
static inline int mlconv_probe_write_all(int fd, const void *data, size_t size) {
    const char *p = (const char *)data;
    while (size > 0) {
        ssize_t n = write(fd, p, size);
        if (n < 0 && errno == EINTR) { continue; }
        if (n <= 0) { return -1; }
        p += n;
        size -= (size_t)n;
    }
    return 0;
}

/// One entry of the pipe: its length (8 bytes, native order; UINT64_MAX for a NULL string), then
/// its bytes.
static inline void mlconv_probe_write_entry(int fd, const char *text) {
    uint64_t length = text == NULL ? UINT64_MAX : (uint64_t)strlen(text);
    if (mlconv_probe_write_all(fd, &length, sizeof length) != 0) { _exit(MLCONV_PROBE_EXIT_READ_FAILED + 1); }
    if (text != NULL && mlconv_probe_write_all(fd, text, (size_t)length) != 0) { _exit(MLCONV_PROBE_EXIT_READ_FAILED + 1); }
}

typedef struct mlconv_probe_error_record {
    hid_t major, minor;
    char function[64];
    char detail[256];
} mlconv_probe_error_record;

typedef struct mlconv_probe_error_records {
    mlconv_probe_error_record records[16];
    int count;
} mlconv_probe_error_records;

static inline herr_t mlconv_probe_copy_error(unsigned n, const H5E_error2_t *record, void *data) {
    (void)n;
    mlconv_probe_error_records *all = (mlconv_probe_error_records *)data;
    if (all->count >= 16) { return 0; }
    mlconv_probe_error_record *copy = &all->records[all->count++];
    copy->major = record->maj_num;
    copy->minor = record->min_num;
    snprintf(copy->function, sizeof copy->function, "%s", record->func_name ? record->func_name : "?");
    snprintf(copy->detail, sizeof copy->detail, "%s", record->desc ? record->desc : "");
    return 0;
}

/// Writes libhdf5's error stack to `fd`, four entries per record: function, detail, and the
/// texts of its major and minor message classes (empty when unknown). mlconv formats them as it
/// formats an error stack in process (`HDF5Library.formatErrorRecord`). (The records are copied
/// first: `H5Eget_msg` clears the stack.)
static inline void mlconv_probe_write_error_stack(int fd) {
    mlconv_probe_error_records all;
    all.count = 0;
    H5Ewalk2(H5E_DEFAULT, H5E_WALK_DOWNWARD, mlconv_probe_copy_error, &all);
    for (int i = 0; i < all.count; i++) {
        char major[128] = "", minor[128] = "";
        if (H5Eget_msg(all.records[i].major, NULL, major, sizeof major) < 0) { major[0] = 0; }
        if (H5Eget_msg(all.records[i].minor, NULL, minor, sizeof minor) < 0) { minor[0] = 0; }
        mlconv_probe_write_entry(fd, all.records[i].function);
        mlconv_probe_write_entry(fd, all.records[i].detail);
        mlconv_probe_write_entry(fd, major);
        mlconv_probe_write_entry(fd, minor);
    }
}

/// Reads all of `object`'s variable-length strings in a child process and hands them to mlconv
/// through a pipe, so that libhdf5 never reads variable-length data in mlconv's process:
/// `H5Aread` (`is_attribute` 1) or `H5Dread` of all of `object` with memory type `memory`
/// (variable-length C strings) into `count` pointers.
///
/// Why: libhdf5 1.10's `H5HG_read` looks a heap object index up in its collection's table without a
/// bound and copies the object's recorded size whatever the reference's length; a damaged
/// reference makes it copy from a wild pointer, or past the end of its buffer. Whether that
/// crashes depends on the process's memory, so the file-wide probe (`mlconv_probe_file_isolated`),
/// run earlier in a process laid out differently, can pass where mlconv's own read would crash or
/// silently corrupt its heap. Here any such damage stays in the child.
///
/// On MLCONV_PROBE_OK, `*out` holds `count` entries (see `mlconv_probe_write_entry`), `*out_size`
/// bytes, to be freed with `free`. On MLCONV_PROBE_EXITED with `detail` MLCONV_PROBE_EXIT_READ_FAILED,
/// libhdf5 refused the read cleanly and `*out` holds its error stack, four entries per record
/// (`mlconv_probe_write_error_stack`). The
/// strings may hold at most `max_bytes` bytes in all (else MLCONV_PROBE_TOO_MUCH_MEMORY, `detail`
/// the MiB received). Other outcomes as `mlconv_probe_file_isolated`'s, with `*out` NULL. Call with
/// mlconv's HDF5 lock held.
static inline mlconv_probe_outcome mlconv_read_vlen_strings_isolated(hid_t object, int is_attribute, hid_t memory,
                                                                     size_t count, uint64_t max_bytes,
                                                                     int64_t timeout_ms, int *detail,
                                                                     char **out, size_t *out_size) {
    *detail = 0;
    *out = NULL;
    *out_size = 0;
    int fds[2];
    if (pipe(fds) != 0) {
        *detail = errno;
        return MLCONV_PROBE_NOT_RUN;
    }
    pid_t child = mlconv_probe_fork(max_bytes);
    if (child < 0) {
        *detail = errno;
        close(fds[0]);
        close(fds[1]);
        return MLCONV_PROBE_NOT_RUN;
    }
    if (child == 0) {
        close(fds[0]);
        struct rusage usage;
        long start = getrusage(RUSAGE_SELF, &usage) == 0 ? usage.ru_maxrss : 0;
        mlconv_probe_walk walk = { max_bytes, start };
        char **pointers = calloc(count > 0 ? count : 1, sizeof(char *));
        if (pointers == NULL) { _exit(MLCONV_PROBE_EXIT_MEMORY); }
        herr_t status = is_attribute ? H5Aread(object, memory, pointers)
                                     : H5Dread(object, memory, H5S_ALL, H5S_ALL, H5P_DEFAULT, pointers);
        if (status < 0) {
            mlconv_probe_check_allocation_failure_keeping_stack();
            mlconv_probe_write_error_stack(fds[1]);
            _exit(MLCONV_PROBE_EXIT_READ_FAILED);
        }
        mlconv_probe_check_memory(&walk);
        for (size_t i = 0; i < count; i++) { mlconv_probe_write_entry(fds[1], pointers[i]); }
        _exit(0);  // the strings are not freed: the child ends here
    }
    close(fds[1]);
    int fd = fds[0];
    struct timespec start, now;
    clock_gettime(CLOCK_MONOTONIC, &start);
    char *buffer = NULL;
    size_t size = 0, capacity = 0;
    mlconv_probe_outcome outcome = MLCONV_PROBE_OK;
    for (;;) {
        clock_gettime(CLOCK_MONOTONIC, &now);
        int64_t elapsed_ms = (int64_t)(now.tv_sec - start.tv_sec) * 1000 + (now.tv_nsec - start.tv_nsec) / 1000000;
        if (elapsed_ms >= timeout_ms) { outcome = MLCONV_PROBE_TIMED_OUT; break; }
        int64_t left = timeout_ms - elapsed_ms;
        struct pollfd waiting = { fd, POLLIN, 0 };
        int ready = poll(&waiting, 1, left > 1000 ? 1000 : (int)left);
        if (ready < 0 && errno != EINTR) { outcome = MLCONV_PROBE_NOT_RUN; *detail = errno; break; }
        if (ready <= 0) { continue; }
        if (capacity - size < 65536) {
            size_t grown = capacity == 0 ? 65536 : capacity * 2;
            char *bigger = realloc(buffer, grown);
            if (bigger == NULL) { outcome = MLCONV_PROBE_TOO_MUCH_MEMORY; break; }
            buffer = bigger;
            capacity = grown;
        }
        ssize_t n = read(fd, buffer + size, capacity - size);
        if (n < 0 && errno == EINTR) { continue; }
        if (n <= 0) { break; }  // end of the pipe: the child finished (or died)
        size += (size_t)n;
        if ((uint64_t)size > max_bytes + 16 * (uint64_t)count) {
            outcome = MLCONV_PROBE_TOO_MUCH_MEMORY;
            *detail = (int)(size >> 20);
            break;
        }
    }
    close(fd);
    if (outcome != MLCONV_PROBE_OK) {
        int status = 0;
        kill(child, SIGKILL);
        while (waitpid(child, &status, 0) < 0 && errno == EINTR) {}
        if (outcome == MLCONV_PROBE_TIMED_OUT) { *detail = (int)(timeout_ms / 1000); }
        free(buffer);
        return outcome;
    }
    clock_gettime(CLOCK_MONOTONIC, &now);
    int64_t elapsed_ms = (int64_t)(now.tv_sec - start.tv_sec) * 1000 + (now.tv_nsec - start.tv_nsec) / 1000000;
    outcome = mlconv_probe_wait(child, timeout_ms > elapsed_ms ? timeout_ms - elapsed_ms : 0, detail);
    if (outcome == MLCONV_PROBE_OK || (outcome == MLCONV_PROBE_EXITED && *detail == MLCONV_PROBE_EXIT_READ_FAILED)) {
        *out = buffer;
        *out_size = size;
    } else {
        free(buffer);
    }
    return outcome;
}

#endif // MLCONV_CHDF5_PROBE_H
