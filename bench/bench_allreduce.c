/*
 * Allreduce bandwidth of the dist_sync KVStore transport (plugins/kvstore-dist)
 * beside MPI_Allreduce on the same buffers, in the same run.
 *
 *   mpirun -np 2 build/bin/bench_allreduce [REPS]
 *
 * For float32 arrays of 1, 4, 16 and 64 MB, rank 0 prints the median over REPS
 * (default 5) timed rounds, after one warm-up round, of
 *   - kvstore: mxk_kvstore_push then mxk_kvstore_pull of one key into an array and a
 *     wait on it (the kernel's copies around the transport's MPI_Iallreduce included),
 *   - MPI_Allreduce(MPI_SUM) of the same bytes on MPI_COMM_WORLD,
 * as GB/s (bytes of the array / seconds) and their ratio. Every round starts after
 * a barrier. The program starts MPI itself (MPI_THREAD_MULTIPLE), as an application
 * using MPI besides mxk does; the plugin then uses it and leaves finalising to it.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mxk.h"

enum { MAX_REPS = 64 };

/** Sorts doubles ascending (for the median). */
static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/** The median of n values (sorts them). */
static double median(double *v, int n) {
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/** Seconds of one push + pull + wait of key `key` through the store. */
static double time_kvstore(mxk_kvstore *kv, int32_t key, mxk_ndarray *grad, mxk_ndarray *out) {
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    if (mxk_kvstore_push_int(kv, 1, &key, &grad, 0) != MXK_OK ||
        mxk_kvstore_pull_int(kv, 1, &key, &out, 0) != MXK_OK ||
        mxk_ndarray_wait_to_read(out) != MXK_OK) {
        fprintf(stderr, "kvstore: %s\n", mxk_get_last_error());
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    return MPI_Wtime() - t0;
}

/** Seconds of one MPI_Allreduce of n floats. */
static double time_mpi(const float *send, float *recv, int n) {
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    MPI_Allreduce(send, recv, n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    return MPI_Wtime() - t0;
}

/** Runs the sizes; returns the exit status. */
static int run(int reps) {
    mxk_kvstore *kv = NULL;
    if (mxk_kvstore_create("dist_sync", &kv) != MXK_OK) {
        fprintf(stderr, "create: %s\n", mxk_get_last_error());
        return 1;
    }
    const int rank = mxk_kvstore_rank(kv);
    if (rank == 0)
        printf("%d workers; median of %d rounds\n%8s %14s %14s %8s\n", mxk_kvstore_num_workers(kv),
               reps, "MB", "kvstore GB/s", "MPI GB/s", "ratio");
    static const int sizes_mb[] = {1, 4, 16, 64};
    for (size_t s = 0; s < sizeof sizes_mb / sizeof sizes_mb[0]; s++) {
        const int n = sizes_mb[s] * (1 << 20) / (int)sizeof(float);
        const double bytes = (double)n * sizeof(float);
        const mxk_shape shape = {.ndim = 1, .dims = {n}};
        const mxk_context cpu = {MXK_DEV_CPU, 0};
        mxk_ndarray *grad = NULL, *out = NULL;
        float *send = malloc((size_t)n * sizeof *send), *recv = malloc((size_t)n * sizeof *recv);
        const int32_t key = sizes_mb[s];
        if (send == NULL || recv == NULL ||
            mxk_ndarray_full(&shape, MXK_FLOAT32, cpu, (float)(rank + 1), &grad) != MXK_OK ||
            mxk_ndarray_full(&shape, MXK_FLOAT32, cpu, 0, &out) != MXK_OK ||
            mxk_kvstore_init_int(kv, 1, &key, &grad) != MXK_OK ||
            mxk_ndarray_copy_to_host(grad, send, (uint64_t)bytes) != MXK_OK) {
            fprintf(stderr, "setup of %d MB: %s\n", sizes_mb[s], mxk_get_last_error());
            return 1;
        }
        double tk[MAX_REPS], tm[MAX_REPS];
        time_kvstore(kv, key, grad, out); /* warm-up: connections, first-touch pages */
        time_mpi(send, recv, n);
        for (int r = 0; r < reps; r++) {
            tk[r] = time_kvstore(kv, key, grad, out);
            tm[r] = time_mpi(send, recv, n);
        }
        double gk = bytes / median(tk, reps) / 1e9, gm = bytes / median(tm, reps) / 1e9;
        if (rank == 0)
            printf("%8d %14.3f %14.3f %8.2f\n", sizes_mb[s], gk, gm, gk / gm);
        mxk_ndarray_free(grad);
        mxk_ndarray_free(out);
        free(send);
        free(recv);
    }
    mxk_kvstore_free(kv);
    return 0;
}

int main(int argc, char **argv) {
    int provided = 0;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    int reps = argc > 1 ? atoi(argv[1]) : 5;
    if (reps < 1 || reps > MAX_REPS) {
        fprintf(stderr, "REPS must be in 1..%d\n", MAX_REPS);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    mxk_init_options o = {.struct_size = sizeof o, .config_dir = MXK_BUILD_CONFDIR};
    int rc = 1;
    if (mxk_init(&o) != MXK_OK)
        fprintf(stderr, "mxk_init: %s\n", mxk_get_last_error());
    else
        rc = run(reps);
    mxk_shutdown();
    MPI_Finalize();
    return rc;
}
