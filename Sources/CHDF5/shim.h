// CHDF5: the C side of mlconv's HDF5 module.
//
// An implementation detail of `Sources/HDF5` (no stable API). It exists because much of libhdf5's
// public API is made of macros that Swift cannot import (`H5P_DEFAULT`, `H5T_NATIVE_FLOAT`,
// `H5F_ACC_RDONLY`, ...) and of functions whose name and signature change between library
// versions (`H5Literate` → `H5Literate2`, `H5Oget_info_by_name2` → `3`, `H5Dvlen_reclaim` →
// `H5Treclaim`). Every such thing is wrapped here by a `static inline` function named `mlconv_*`,
// so the Swift code compiles unchanged against libhdf5 1.10, 1.12 and 1.14.
//
// None of these functions takes libhdf5's global lock: the Swift side serializes every call.
#ifndef MLCONV_CHDF5_SHIM_H
#define MLCONV_CHDF5_SHIM_H

#include <hdf5.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

// MARK: Constants that are macros in hdf5.h

static inline hid_t mlconv_H5P_DEFAULT(void) { return H5P_DEFAULT; }
static inline hid_t mlconv_H5E_DEFAULT(void) { return H5E_DEFAULT; }
static inline hid_t mlconv_H5S_ALL(void) { return H5S_ALL; }
static inline unsigned mlconv_H5F_ACC_RDONLY(void) { return H5F_ACC_RDONLY; }
static inline size_t mlconv_H5T_VARIABLE(void) { return H5T_VARIABLE; }
static inline unsigned mlconv_H5P_CRT_ORDER_TRACKED(void) { return H5P_CRT_ORDER_TRACKED; }

static inline hid_t mlconv_H5T_NATIVE_FLOAT(void) { return H5T_NATIVE_FLOAT; }
static inline hid_t mlconv_H5T_NATIVE_DOUBLE(void) { return H5T_NATIVE_DOUBLE; }
static inline hid_t mlconv_H5T_NATIVE_INT64(void) { return H5T_NATIVE_INT64; }
static inline hid_t mlconv_H5T_NATIVE_UINT8(void) { return H5T_NATIVE_UCHAR; }
static inline hid_t mlconv_H5T_C_S1(void) { return H5T_C_S1; }

// MARK: Files

/// A new file-access property list for read-only opening (close it with `H5Pclose`): file
/// locking is disabled where libhdf5 supports that (1.10.7+), so that reading works on file
/// systems without `flock` (network mounts) and never contends with other readers. Negative on
/// failure.
static inline hid_t mlconv_create_read_only_fapl(void) {
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    if (fapl < 0) { return fapl; }
#if H5_VERSION_GE(1, 10, 7)
    H5Pset_file_locking(fapl, 0, 1);
#endif
    return fapl;
}

// MARK: Library version

/// Writes the runtime version of libhdf5 (not the headers') to the three out-parameters.
static inline herr_t mlconv_library_version(unsigned *major, unsigned *minor, unsigned *release) {
    return H5get_libversion(major, minor, release);
}

// MARK: Error stack

/// Stops libhdf5 from printing its error stack to stderr for the calling thread. (In a
/// thread-safe build of libhdf5 this setting is per thread, so the Swift side calls it every
/// time it enters the library.)
static inline void mlconv_silence_error_printing(void) {
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
}

/// Empties the calling thread's error stack.
static inline void mlconv_clear_error_stack(void) {
    H5Eclear2(H5E_DEFAULT);
}

// MARK: Objects

/// The kind of object that `name` (relative to `loc`, or absolute) resolves to, following soft
/// links: writes `H5O_TYPE_GROUP`, `H5O_TYPE_DATASET`, `H5O_TYPE_NAMED_DATATYPE` or
/// `H5O_TYPE_UNKNOWN` to `type`. Negative on failure (missing object, dangling link).
static inline herr_t mlconv_object_type_by_name(hid_t loc, const char *name, H5O_type_t *type) {
#if H5_VERSION_GE(1, 12, 0)
    H5O_info2_t info;
    herr_t status = H5Oget_info_by_name3(loc, name, &info, H5O_INFO_BASIC, H5P_DEFAULT);
#else
    H5O_info_t info;
    herr_t status = H5Oget_info_by_name2(loc, name, &info, H5O_INFO_BASIC, H5P_DEFAULT);
#endif
    if (status >= 0) { *type = info.type; }
    return status;
}

/// Writes an identity of the object `name` resolves to (following soft links) to `out`: its
/// object token (libhdf5 ≥ 1.12) or header address, so that two paths reaching the same object
/// (hard links, soft links to an ancestor) compare equal. Negative on failure.
static inline herr_t mlconv_object_identity_by_name(hid_t loc, const char *name, uint64_t out[2]) {
    out[0] = 0; out[1] = 0;
#if H5_VERSION_GE(1, 12, 0)
    H5O_info2_t info;
    herr_t status = H5Oget_info_by_name3(loc, name, &info, H5O_INFO_BASIC, H5P_DEFAULT);
    if (status >= 0) {
        size_t n = sizeof(info.token) < 2 * sizeof(uint64_t) ? sizeof(info.token) : 2 * sizeof(uint64_t);
        memcpy(out, &info.token, n);
    }
#else
    H5O_info_t info;
    herr_t status = H5Oget_info_by_name2(loc, name, &info, H5O_INFO_BASIC, H5P_DEFAULT);
    if (status >= 0) { out[0] = (uint64_t)info.addr; }
#endif
    return status;
}

/// Writes 1 to `tracked` when group `group` tracks link creation order (h5py's
/// `track_order=True`), 0 otherwise. Negative on failure.
static inline herr_t mlconv_group_tracks_creation_order(hid_t group, int *tracked) {
    hid_t plist = H5Gget_create_plist(group);
    if (plist < 0) { return -1; }
    unsigned flags = 0;
    herr_t status = H5Pget_link_creation_order(plist, &flags);
    H5Pclose(plist);
    if (status >= 0) { *tracked = (flags & H5P_CRT_ORDER_TRACKED) ? 1 : 0; }
    return status;
}

// MARK: Link iteration

/// Called once per link name by `mlconv_iterate_link_names`; return 0 to go on, a positive
/// value to stop early, a negative value to fail.
typedef int (*mlconv_link_name_callback)(const char *name, void *context);

typedef struct mlconv_link_iteration {
    mlconv_link_name_callback callback;
    void *context;
} mlconv_link_iteration;

#if H5_VERSION_GE(1, 12, 0)
static herr_t mlconv_link_trampoline(hid_t group, const char *name, const H5L_info2_t *info,
                                     void *data) {
#else
static herr_t mlconv_link_trampoline(hid_t group, const char *name, const H5L_info_t *info,
                                     void *data) {
#endif
    (void)group;
    (void)info;
    const mlconv_link_iteration *iteration = (const mlconv_link_iteration *)data;
    return (herr_t)iteration->callback(name, iteration->context);
}

/// Calls `callback` with the name of every link in `group`, in `index` order
/// (`H5_INDEX_NAME` or `H5_INDEX_CRT_ORDER`), increasing. Negative on failure.
static inline herr_t mlconv_iterate_link_names(hid_t group, H5_index_t index,
                                               mlconv_link_name_callback callback,
                                               void *context) {
    mlconv_link_iteration iteration = { callback, context };
    hsize_t position = 0;
#if H5_VERSION_GE(1, 12, 0)
    return H5Literate2(group, index, H5_ITER_INC, &position, mlconv_link_trampoline, &iteration);
#else
    return H5Literate(group, index, H5_ITER_INC, &position, mlconv_link_trampoline, &iteration);
#endif
}

// MARK: Variable-length data

/// Frees the memory libhdf5 allocated while reading variable-length data (strings) of memory
/// type `type` and dataspace `space` into `buffer`.
static inline herr_t mlconv_reclaim_vlen(hid_t type, hid_t space, void *buffer) {
#if H5_VERSION_GE(1, 12, 0)
    return H5Treclaim(type, space, H5P_DEFAULT, buffer);
#else
    return H5Dvlen_reclaim(type, space, H5P_DEFAULT, buffer);
#endif
}

#endif // MLCONV_CHDF5_SHIM_H
