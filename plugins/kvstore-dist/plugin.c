/*
 * Entry points of the kvstore-dist plugin and its process-wide MPI state.
 *
 * MPI is started lazily by the first transport create (dist_mpi_start), never at
 * plugin load, so loading the plugin costs nothing in a process that never creates
 * a dist store (mxk's default config loads every plugin), and finalised at
 * mxk_plugin_shutdown if this plugin started it. Upstream MXNet starts its
 * transport (ps-lite) in KVStoreDist's constructor (src/kvstore/kvstore_dist.h)
 * the same way: when the store is created.
 */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "dist.h"
#include "mxk_sdk_half.h"

const mxk_host_api *dist_host;

static pthread_mutex_t mpi_lock = PTHREAD_MUTEX_INITIALIZER;
static int mpi_started; /**< this plugin called MPI_Init_thread successfully */
static MPI_Op half_sum = MPI_OP_NULL;

/** Environment variables of the MPI launchers (Open MPI's mpirun, PMIx, PMI-1/2: MPICH, Slurm). */
static const char *const LAUNCH_VARS[] = {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_SIZE"};

const char *dist_mpi_error(int code, char *buf, size_t len) {
    char text[MPI_MAX_ERROR_STRING];
    int n = 0;
    if (MPI_Error_string(code, text, &n) != MPI_SUCCESS)
        snprintf(text, sizeof text, "MPI error %d", code);
    snprintf(buf, len, "%s", text);
    return buf;
}

/** MPI user function: inout[i] += in[i] for float16 bit patterns, summed in float32. */
static void half_sum_fn(void *in, void *inout, int *len, MPI_Datatype *type) {
    (void)type;
    const uint16_t *a = in;
    uint16_t *b = inout;
    for (int i = 0; i < *len; i++)
        b[i] = mxk_sdk_f32_to_f16(mxk_sdk_f16_to_f32(a[i]) + mxk_sdk_f16_to_f32(b[i]));
}

MPI_Op dist_half_sum_op(void) {
    return half_sum;
}

/** Default of MXK_KVSTORE_TIMEOUT, seconds. */
#define DIST_TIMEOUT_DEFAULT 60.0

uint64_t dist_key_hash(const char *s) {
    uint64_t h = 1469598103934665603ull;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

/** Reads MXK_KVSTORE_TIMEOUT (see dist_mpi_start). */
static mxk_status read_timeout(const char *name, double *out, mxk_error_sink *err) {
    const char *s = getenv("MXK_KVSTORE_TIMEOUT");
    *out = DIST_TIMEOUT_DEFAULT;
    if (s == NULL || *s == '\0')
        return MXK_OK;
    char *end = NULL;
    double v = strtod(s, &end);
    if (end == s || *end != '\0' || !(v > 0) || !isfinite(v))
        return dist_host->error(err, MXK_ERR_INVALID_ARGUMENT,
                                "KVStore %s: MXK_KVSTORE_TIMEOUT must be a positive number of "
                                "seconds, got '%s'",
                                name, s);
    *out = v;
    return MXK_OK;
}

/** True when an MPI launcher started this process. */
static int mpi_launched(void) {
    for (size_t i = 0; i < sizeof LAUNCH_VARS / sizeof LAUNCH_VARS[0]; i++)
        if (getenv(LAUNCH_VARS[i]) != NULL)
            return 1;
    return 0;
}

mxk_status dist_mpi_start(const char *name, double *timeout, mxk_error_sink *err) {
    if (read_timeout(name, timeout, err) != MXK_OK)
        return MXK_ERR_INVALID_ARGUMENT;
    if (!mpi_launched())
        return dist_host->error(err, MXK_ERR_STATE,
                                "KVStore '%s' needs an MPI launch: mpirun -np N mxk train "
                                "--kv-store %s ... (see docs/distributed.md)",
                                name, name);
    pthread_mutex_lock(&mpi_lock);
    mxk_status st = MXK_OK;
    char text[MPI_MAX_ERROR_STRING + 64];
    int inited = 0, finalized = 0, provided = MPI_THREAD_SINGLE;
    MPI_Initialized(&inited);
    MPI_Finalized(&finalized);
    if (finalized) {
        st = dist_host->error(err, MXK_ERR_STATE, "KVStore %s: MPI was already finalized", name);
    } else if (!inited) {
        int rc = MPI_Init_thread(NULL, NULL, MPI_THREAD_MULTIPLE, &provided);
        if (rc != MPI_SUCCESS)
            st = dist_host->error(err, MXK_ERR_BACKEND, "KVStore %s: MPI_Init_thread: %s", name,
                                  dist_mpi_error(rc, text, sizeof text));
        else
            mpi_started = 1;
    } else {
        MPI_Query_thread(&provided); /* the application started MPI itself: it finalises it */
    }
    if (st == MXK_OK && provided < MPI_THREAD_MULTIPLE)
        st = dist_host->error(err, MXK_ERR_BACKEND,
                              "KVStore %s: the MPI library gives thread level %d, and "
                              "MPI_THREAD_MULTIPLE (%d) is needed (Open MPI: a build with "
                              "--enable-mpi-thread-multiple, the default since 3.0)",
                              name, provided, MPI_THREAD_MULTIPLE);
    if (st == MXK_OK && half_sum == MPI_OP_NULL) {
        int rc = MPI_Op_create(half_sum_fn, 1, &half_sum);
        if (rc != MPI_SUCCESS)
            st = dist_host->error(err, MXK_ERR_BACKEND, "KVStore %s: MPI_Op_create: %s", name,
                                  dist_mpi_error(rc, text, sizeof text));
    }
    pthread_mutex_unlock(&mpi_lock);
    return st;
}

MXK_PLUGIN_EXPORT const mxk_plugin_info *mxk_plugin_get_info(void) {
    static const mxk_plugin_info info = {
        .struct_size = sizeof(mxk_plugin_info),
        .abi_major = MXK_ABI_MAJOR,
        .abi_minor = MXK_ABI_MINOR,
        .min_host_minor = 0,
        .name = "kvstore-dist",
        .version = "0.1.0",
        .description = "distributed KVStore over MPI: dist_sync, dist_device_sync (allreduce), "
                       "dist_async (servers)",
        .provides = MXK_PROVIDES_KVSTORE,
    };
    return &info;
}

MXK_PLUGIN_EXPORT mxk_status mxk_plugin_init(const mxk_plugin_init_args *args,
                                             mxk_error_sink *err) {
    dist_host = args->host;
    mxk_status st = dist_register_transports(args->registrar, err);
    return st == MXK_OK ? dist_register_async(args->registrar, err) : st;
}

/** Frees the float16 operator and finalises MPI if this plugin initialised it. */
MXK_PLUGIN_EXPORT void mxk_plugin_shutdown(void) {
    pthread_mutex_lock(&mpi_lock);
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (!finalized && half_sum != MPI_OP_NULL)
        MPI_Op_free(&half_sum);
    if (mpi_started && !finalized)
        MPI_Finalize();
    mpi_started = 0;
    pthread_mutex_unlock(&mpi_lock);
}
