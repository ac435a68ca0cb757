/*
 * cuda plugin: the device backend's multi-GPU reduce (mxk_device_def.reduce, ABI
 * 1.4) on NCCL: the "device" KVStore's sum of the values one process pushes from
 * several GPUs, as MXNet's KVStoreNCCL does it (src/kvstore/kvstore_nccl.h: one
 * communicator clique per device set, ncclReduce to the root device inside an
 * NCCL group, on streams of its own).
 *
 * Cliques are created on first use for an ordered device list (rank i is
 * src_dev[i], the root is rank 0) with ncclCommInitAll, kept until the plugin shuts
 * down (at most CU_NCCL_CLIQUES lists), each with one non-blocking stream per
 * device. A reduce locks its clique (NCCL communicators are not for concurrent
 * use), launches one ncclReduce per device in a group, and waits for the streams:
 * the call is synchronous, as the slot's contract says. The sources were written
 * by engine functions whose streams the engine has already synchronised.
 */
#include "cuda_plugin.h"

#include <nccl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/** Most distinct device lists with a clique. */
#define CU_NCCL_CLIQUES 16

/** Communicators and streams of one ordered device list. */
typedef struct cu_clique {
    uint32_t n;
    int devs[CU_MAX_DEVICES];
    ncclComm_t comms[CU_MAX_DEVICES];
    cudaStream_t streams[CU_MAX_DEVICES];
    pthread_mutex_t mu; /**< serialises the clique's collectives */
} cu_clique;

static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER; /**< guards the list */
static cu_clique *g_cliques[CU_NCCL_CLIQUES];
static uint32_t g_num_cliques;

/** NCCL's type of an mxk dtype; false for one it has none for. */
static bool cu_nccl_type(int32_t dtype, ncclDataType_t *t) {
    switch (dtype) {
    case MXK_FLOAT32:
        *t = ncclFloat32;
        return true;
    case MXK_FLOAT64:
        *t = ncclFloat64;
        return true;
    case MXK_FLOAT16:
        *t = ncclFloat16;
        return true;
    case MXK_UINT8:
        *t = ncclUint8;
        return true;
    case MXK_INT8:
        *t = ncclInt8;
        return true;
    case MXK_INT32:
        *t = ncclInt32;
        return true;
    case MXK_INT64:
        *t = ncclInt64;
        return true;
    default:
        return false;
    }
}

/** NCCL status into mxk's: "WHAT: NCCL error STRING" as MXK_ERR_BACKEND. */
static mxk_status cu_check_nccl(ncclResult_t st, const char *what, mxk_error_sink *err) {
    if (st == ncclSuccess)
        return MXK_OK;
    return mxk_sdk_error(err, MXK_ERR_BACKEND, "%s: NCCL error %s", what, ncclGetErrorString(st));
}

/** Destroys a clique's streams and communicators (those created) and frees it. */
static void cu_clique_free(cu_clique *c) {
    for (uint32_t i = 0; i < c->n; i++) {
        if (c->streams[i] != NULL && cudaSetDevice(c->devs[i]) == cudaSuccess)
            (void)cudaStreamDestroy(c->streams[i]);
        if (c->comms[i] != NULL)
            (void)ncclCommDestroy(c->comms[i]);
    }
    (void)cudaGetLastError();
    pthread_mutex_destroy(&c->mu);
    free(c);
}

/** Creates a clique over devs[0..n) into *out (err set on failure). */
static mxk_status cu_clique_new(uint32_t n, const int32_t *devs, cu_clique **out,
                                mxk_error_sink *err) {
    *out = NULL;
    cu_clique *c = calloc(1, sizeof *c);
    if (c == NULL)
        return mxk_sdk_error(err, MXK_ERR_OUT_OF_MEMORY, "NCCL reduce: out of memory");
    pthread_mutex_init(&c->mu, NULL);
    c->n = n;
    for (uint32_t i = 0; i < n; i++)
        c->devs[i] = devs[i];
    mxk_status st =
        cu_check_nccl(ncclCommInitAll(c->comms, (int)n, c->devs), "ncclCommInitAll", err);
    if (st != MXK_OK)
        memset(c->comms, 0, sizeof c->comms);
    for (uint32_t i = 0; st == MXK_OK && i < n; i++) {
        st = cu_check(cudaSetDevice(devs[i]), "cudaSetDevice", err);
        if (st == MXK_OK)
            st = cu_check(cudaStreamCreateWithFlags(&c->streams[i], cudaStreamNonBlocking),
                          "cudaStreamCreateWithFlags", err);
    }
    if (st != MXK_OK) {
        cu_clique_free(c);
        return st;
    }
    *out = c;
    return MXK_OK;
}

/** Finds or creates the clique of the ordered list devs[0..n) into *out (err set on failure). */
static mxk_status cu_clique_get(uint32_t n, const int32_t *devs, cu_clique **out,
                                mxk_error_sink *err) {
    pthread_mutex_lock(&g_mu);
    cu_clique *c = NULL;
    for (uint32_t k = 0; k < g_num_cliques && c == NULL; k++) {
        cu_clique *q = g_cliques[k];
        bool same = q->n == n;
        for (uint32_t i = 0; same && i < n; i++)
            same = q->devs[i] == devs[i];
        if (same)
            c = q;
    }
    mxk_status st = MXK_OK;
    if (c == NULL && g_num_cliques == CU_NCCL_CLIQUES)
        st = mxk_sdk_error(err, MXK_ERR_UNSUPPORTED,
                           "NCCL reduce: more than %d distinct device lists in one process",
                           CU_NCCL_CLIQUES);
    else if (c == NULL && (st = cu_clique_new(n, devs, &c, err)) == MXK_OK)
        g_cliques[g_num_cliques++] = c;
    pthread_mutex_unlock(&g_mu);
    *out = c;
    return st;
}

/** The slot: dst (on devs[0]) = sum of src[i] (on devs[i]), with ncclReduce to rank 0. */
static mxk_status cu_reduce(uint32_t n, const void *const *src, const int32_t *src_dev, void *dst,
                            int32_t dtype, uint64_t count, mxk_error_sink *err) {
    ncclDataType_t t;
    if (!cu_nccl_type(dtype, &t))
        return mxk_sdk_error(err, MXK_ERR_UNSUPPORTED, "NCCL reduce: unsupported dtype %d",
                             (int)dtype);
    if (n < 2 || n > CU_MAX_DEVICES)
        return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT, "NCCL reduce: %u devices (2 to %d)", n,
                             CU_MAX_DEVICES);
    cu_clique *c = NULL;
    MXK_SDK_CHECK(cu_clique_get(n, src_dev, &c, err));
    pthread_mutex_lock(&c->mu);
    mxk_status st = cu_check_nccl(ncclGroupStart(), "ncclGroupStart", err);
    for (uint32_t i = 0; st == MXK_OK && i < n; i++) {
        void *recv = i == 0 ? dst : (void *)src[i]; /* recvbuff is read on the root only */
        st = cu_check_nccl(
            ncclReduce(src[i], recv, (size_t)count, t, ncclSum, 0, c->comms[i], c->streams[i]),
            "ncclReduce", err);
    }
    mxk_status end = cu_check_nccl(ncclGroupEnd(), "ncclGroupEnd", err);
    if (st == MXK_OK)
        st = end;
    for (uint32_t i = 0; st == MXK_OK && i < n; i++)
        st = cu_check(cudaSetDevice(c->devs[i]), "cudaSetDevice", err) == MXK_OK
                 ? cu_check(cudaStreamSynchronize(c->streams[i]), "NCCL reduce stream", err)
                 : MXK_ERR_BACKEND;
    pthread_mutex_unlock(&c->mu);
    return st;
}

void cu_nccl_install(mxk_device_def *def) {
    def->reduce = cu_reduce;
}

void cu_nccl_shutdown(void) {
    pthread_mutex_lock(&g_mu);
    for (uint32_t k = 0; k < g_num_cliques; k++)
        cu_clique_free(g_cliques[k]);
    g_num_cliques = 0;
    pthread_mutex_unlock(&g_mu);
}
