/*
 * mxk plugin ABI, version 1.0: base types shared by every part of the ABI.
 *
 * Pure C11, no dependencies beyond <stdint.h>/<stddef.h>. See abi/README.md for
 * the versioning, ownership and threading rules that every header here follows.
 *
 * Value types (mxk_shape, mxk_inplace_pair) are *frozen*: their layout never
 * changes, so they carry no size field and can be passed in plain arrays.
 * Every other struct that crosses the boundary starts with `uint32_t
 * struct_size` (and, for structs a plugin writes, `uint32_t abi_minor`); such
 * structs only ever grow at the end.
 */
#ifndef MXK_ABI_BASE_H
#define MXK_ABI_BASE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** ABI major version: a plugin built for another major is rejected. */
#define MXK_ABI_MAJOR 1
/** ABI minor version of these headers. Minors only add (struct tails, new table slots). */
#define MXK_ABI_MINOR 5

/** Largest number of dimensions of an mxk_shape (MXNet allows up to 32; 8 covers its ops). */
#define MXK_MAX_NDIM 8

/**
 * Status code returned by every fallible ABI and kernel function.
 * MXK_OK (0) is success; every other value is an error class. The human-readable
 * detail travels separately, through an mxk_error_sink (ABI) or
 * mxk_get_last_error() (public API).
 */
typedef enum mxk_status {
    MXK_OK = 0,
    MXK_ERR_INVALID_ARGUMENT = 1, /**< a bad argument, attribute or option value */
    MXK_ERR_SHAPE = 2,            /**< inconsistent shapes (shape inference, binding) */
    MXK_ERR_TYPE = 3,             /**< inconsistent or unsupported dtypes */
    MXK_ERR_NOT_FOUND = 4,        /**< unknown operator, attribute, key, file, ... */
    MXK_ERR_OUT_OF_MEMORY = 5,    /**< an allocation failed */
    MXK_ERR_UNSUPPORTED = 6,      /**< valid request that this build/backend cannot do */
    MXK_ERR_IO = 7,               /**< reading or writing a file failed */
    MXK_ERR_FORMAT = 8,           /**< malformed input data (file contents, JSON, INI) */
    MXK_ERR_ABI = 9,              /**< version skew or malformed plugin definitions */
    MXK_ERR_DUPLICATE = 10,       /**< a name registered twice */
    MXK_ERR_BACKEND = 11,         /**< a device/backend library reported a failure */
    MXK_ERR_STATE = 12,           /**< call not valid in the object's current state */
    MXK_ERR_INTERNAL = 13         /**< a bug in mxk or a plugin (broken invariant) */
} mxk_status;

/** Element types, with MXNet's type-flag codes (mshadow/base.h). */
typedef enum mxk_dtype {
    MXK_DTYPE_UNKNOWN = -1,
    MXK_FLOAT32 = 0,
    MXK_FLOAT64 = 1,
    MXK_FLOAT16 = 2,
    MXK_UINT8 = 3,
    MXK_INT32 = 4,
    MXK_INT8 = 5,
    MXK_INT64 = 6
} mxk_dtype;

/** Device types, with MXNet's codes (include/mxnet/base.h). */
typedef enum mxk_dev_type { MXK_DEV_CPU = 1, MXK_DEV_GPU = 2, MXK_DEV_CPU_PINNED = 3 } mxk_dev_type;

/**
 * Write request of one output, MXNet's OpReqType (include/mxnet/op_attr_types.h).
 * NULL: do not write; WRITE: overwrite raw memory; INPLACE: overwrite, memory is
 * shared with an input; ADD: out += result.
 */
typedef enum mxk_op_req {
    MXK_REQ_NULL = 0,
    MXK_REQ_WRITE = 1,
    MXK_REQ_INPLACE = 2,
    MXK_REQ_ADD = 3
} mxk_op_req;

/**
 * A shape (frozen value type). Row-major, batch first.
 * ndim == 0 means "unknown shape"; a dim of 0 means "unknown dimension" (MXNet
 * legacy semantics, which shape inference uses for partial results).
 * Dims beyond ndim are ignored and should be 0.
 */
typedef struct mxk_shape {
    int32_t ndim;
    int32_t reserved_; /**< keep 0; pads dims to 8-byte alignment */
    int64_t dims[MXK_MAX_NDIM];
} mxk_shape;

/**
 * Per-call error sink, owned by the kernel. A plugin writes into it with the
 * host table's `error` function, which also returns the code it was given, so
 * `return host->error(err, MXK_ERR_SHAPE, "...")` is the idiom. Valid only for the
 * duration of the call that received it; not thread-safe (one call, one thread).
 */
typedef struct mxk_error_sink mxk_error_sink;

/** Opaque engine variable (a dependency tag). Created and destroyed by the kernel. */
typedef struct mxk_engine_var mxk_engine_var;

/** Opaque completion handle of an asynchronous engine function; see host->async_complete. */
typedef struct mxk_async_handle mxk_async_handle;

/** Opaque, kernel-owned string->string dictionary (operator attributes, plugin options). */
typedef struct mxk_attrs mxk_attrs;

/** Opaque, kernel-owned list of strings that a plugin appends to (argument names, ...). */
typedef struct mxk_name_list mxk_name_list;

/** Opaque counter-based random stream (Philox-4x32-10) handed to kernels that request one. */
typedef struct mxk_random mxk_random;

#ifdef __cplusplus
}
#endif

#endif /* MXK_ABI_BASE_H */
