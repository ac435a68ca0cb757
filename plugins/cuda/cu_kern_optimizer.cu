/*
 * cuda plugin: the fused optimizer update kernel (cu_kern_optimizer.h): one
 * grid-stride pass reads weight and gradient, updates the states in place and
 * stores the new weight, per element, with the rules of plugins/common/
 * mxk_optimizer.h that cpu-blas's kernel uses too.
 * Semantics: MXNet src/operator/optimizer_op-inl.h (SGDKernel, SGDMomKernel,
 * AdamUpdateKernel) and optimizer_op.cu. The GPU may fuse a multiply and an add
 * into an FMA, so results can differ from the CPU's in the last float bits.
 */
#include "cu_kern_optimizer.h"
#include "cu_launch.cuh"
#include "cu_req.cuh"

/** The update of rule RULE over n elements; out may alias w (each element read first). */
template <int RULE>
__global__ void cu_optimizer_kernel(mxk_opt_hparams h, const float *w, const float *g, float *m,
                                    float *v, float *out, int32_t req, uint64_t n) {
    CU_KERNEL_LOOP(i, n) {
        float wi = w[i], gi = g[i], nw;
        if (RULE == CU_OPT_SGD) {
            nw = mxk_opt_sgd(&h, wi, gi);
        } else if (RULE == CU_OPT_SGD_MOM) {
            float mi = m[i];
            nw = mxk_opt_sgd_mom(&h, wi, gi, &mi);
            m[i] = mi;
        } else {
            float mi = m[i], vi = v[i];
            nw = mxk_opt_adam(&h, wi, gi, &mi, &vi);
            m[i] = mi;
            v[i] = vi;
        }
        cu_store(&out[i], nw, req);
    }
}

extern "C" cudaError_t cu_launch_optimizer(int32_t rule, mxk_opt_hparams h, const float *w,
                                           const float *g, float *m, float *v, float *out,
                                           int32_t req, uint64_t n, cudaStream_t stream) {
    unsigned grid = cu_blocks(n);
    if (rule == CU_OPT_SGD)
        cu_optimizer_kernel<CU_OPT_SGD>
            <<<grid, CU_THREADS, 0, stream>>>(h, w, g, m, v, out, req, n);
    else if (rule == CU_OPT_SGD_MOM)
        cu_optimizer_kernel<CU_OPT_SGD_MOM>
            <<<grid, CU_THREADS, 0, stream>>>(h, w, g, m, v, out, req, n);
    else
        cu_optimizer_kernel<CU_OPT_ADAM>
            <<<grid, CU_THREADS, 0, stream>>>(h, w, g, m, v, out, req, n);
    return cu_launched();
}
