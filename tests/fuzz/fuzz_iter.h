/*
 * What the data-iterator fuzz targets (fuzz_mnist_iter, fuzz_csv_iter) share:
 * a run of an iterator
 * through two epochs through the public API (mxk_data_iter_*, upstream
 * include/mxnet/c_api.h MXDataIter*), checking the properties every iterator
 * keeps whatever its files hold. Include after fuzz_kernel.h.
 */
#ifndef MXK_FUZZ_ITER_H
#define MXK_FUZZ_ITER_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fuzz_tmp.h"

/** Elements of a shape. */
static uint64_t fuzz_iter_elems(const mxk_shape *s) {
    uint64_t n = 1;
    for (int32_t d = 0; d < s->ndim; d++)
        n *= (uint64_t)s->dims[d];
    return n;
}

/**
 * Runs one epoch of `it`: every batch's arrays have the described shapes, pad is
 * below the batch size and the batch is readable. Returns the examples delivered
 * (batch size - pad summed), or -1 when next failed (then it checks the error has
 * a message and is sticky).
 */
static int64_t fuzz_iter_epoch(mxk_data_iter *it, const char *who) {
    uint32_t nd = 0, nl = 0;
    const mxk_shape *ds = NULL, *ls = NULL;
    if (mxk_data_iter_describe(it, &nd, NULL, &ds, &nl, NULL, &ls) != MXK_OK || nd < 1)
        fuzz_kernel_fail(who, "describe failed");
    int64_t batch = ds[0].dims[0], delivered = 0;
    for (;;) {
        int32_t has_next = 0;
        mxk_status st = mxk_data_iter_next(it, &has_next);
        if (st != MXK_OK) {
            if (has_next != 0 || mxk_get_last_error()[0] == '\0')
                fuzz_kernel_fail(who, "next failed without a message, or with a batch");
            if (mxk_data_iter_next(it, &has_next) != st)
                fuzz_kernel_fail(who, "a failed next is not sticky");
            return -1;
        }
        if (!has_next)
            return delivered;
        uint32_t bd = 0, bl = 0, pad = 0;
        mxk_ndarray *const *d = NULL, *const *l = NULL;
        if (mxk_data_iter_batch(it, &bd, &d, &bl, &l, &pad) != MXK_OK || bd != nd || bl != nl)
            fuzz_kernel_fail(who, "no batch after a successful next");
        if ((int64_t)pad >= batch)
            fuzz_kernel_fail(who, "pad is not below the batch size");
        for (uint32_t i = 0; i < bd + bl; i++) {
            mxk_ndarray *a = i < bd ? d[i] : l[i - bd];
            mxk_shape want = i < bd ? ds[i] : ls[i - bd], got = mxk_ndarray_shape(a);
            if (got.ndim != want.ndim ||
                memcmp(got.dims, want.dims, sizeof(int64_t) * (size_t)got.ndim) != 0)
                fuzz_kernel_fail(who, "a batch array differs from the described shape");
            uint64_t n = fuzz_iter_elems(&got);
            float *host = malloc(n * sizeof *host + 1);
            if (mxk_ndarray_copy_to_host(a, host, n * sizeof *host) != MXK_OK)
                fuzz_kernel_fail(who, "cannot read a batch array");
            free(host);
        }
        delivered += batch - (int64_t)pad;
    }
}

/**
 * Creates `name` with the attributes and runs two epochs (the second after a
 * reset). Returns the examples of the first epoch, -1 when creation or an epoch
 * failed cleanly; aborts when a property breaks, including, when `same_epochs`,
 * a second epoch that delivers a different number of examples.
 */
static int64_t fuzz_iter_run(const char *name, uint32_t n, const char *const *keys,
                             const char *const *vals, int same_epochs) {
    mxk_data_iter *it = (mxk_data_iter *)&it;
    mxk_status st = mxk_data_iter_create(name, n, keys, vals, &it);
    if (st != MXK_OK) {
        if (it != NULL || mxk_get_last_error()[0] == '\0')
            fuzz_kernel_fail(name, "create failed without a message, or left an iterator");
        if (st != MXK_ERR_FORMAT && st != MXK_ERR_INVALID_ARGUMENT && st != MXK_ERR_IO &&
            st != MXK_ERR_OUT_OF_MEMORY)
            fuzz_kernel_fail(name, "unexpected status from create");
        return -1;
    }
    int64_t first = fuzz_iter_epoch(it, name);
    if (first >= 0) {
        if (mxk_data_iter_reset(it) != MXK_OK)
            fuzz_kernel_fail(name, "reset failed after a clean epoch");
        int64_t second = fuzz_iter_epoch(it, name);
        if (same_epochs && second >= 0 && second != first)
            fuzz_kernel_fail(name, "two epochs delivered different numbers of examples");
    }
    mxk_data_iter_free(it);
    return first;
}

#endif /* MXK_FUZZ_ITER_H */
