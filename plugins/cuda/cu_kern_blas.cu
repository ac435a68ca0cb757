/*
 * cuda plugin: the bias steps of FullyConnected around its cuBLAS GEMMs (see
 * cu_kern_blas.h; upstream src/operator/nn/fully_connected-inl.h, AddBias and
 * AddBiasGrad for gpu). The column sums keep cpu-blas's order (one running
 * float sum per column, row by row) rather than upstream's two-phase
 * reduction, so both backends give the same bias gradient.
 */
#include "cu_kern_blas.h"
#include "cu_launch.cuh"

/** y[i] (=|+=) b[i % cols] over the rows * cols elements of y. */
__global__ void cu_bias_rows_kernel(float *y, const float *b, uint64_t n, uint64_t cols, int add) {
    CU_KERNEL_LOOP(i, n) {
        float v = b[i % cols];
        y[i] = add ? y[i] + v : v;
    }
}

extern "C" cudaError_t cu_launch_bias_rows(float *y, const float *b, int64_t rows, int64_t cols,
                                           int add, cudaStream_t stream) {
    uint64_t n = (uint64_t)rows * (uint64_t)cols;
    if (n == 0)
        return cudaSuccess;
    cu_bias_rows_kernel<<<cu_blocks(n), CU_THREADS, 0, stream>>>(y, b, n, (uint64_t)cols, add);
    return cu_launched();
}

/**
 * One thread per column c: out[c] (=|+=) x[0, c] + x[1, c] + ... in row order.
 * Neighbouring threads read neighbouring columns, so each row's loads coalesce.
 */
__global__ void cu_column_sum_kernel(float *out, const float *x, uint64_t rows, uint64_t cols,
                                     int add) {
    CU_KERNEL_LOOP(c, cols) {
        float acc = add ? out[c] : 0.0f;
        for (uint64_t r = 0; r < rows; r++)
            acc += x[r * cols + c];
        out[c] = acc;
    }
}

extern "C" cudaError_t cu_launch_column_sum(float *out, const float *x, int64_t rows, int64_t cols,
                                            int add, cudaStream_t stream) {
    if (cols <= 0)
        return cudaSuccess;
    cu_column_sum_kernel<<<cu_blocks((uint64_t)cols), CU_THREADS, 0, stream>>>(
        out, x, (uint64_t)rows, (uint64_t)cols, add);
    return cu_launched();
}
