/*
 * The Module's state, shared by module.c (python/mxnet/module/module.py,
 * base_module.py) and module_bucket.c (python/mxnet/module/bucketing_module.py).
 */
#ifndef MXK_MODULE_INTERNAL_H
#define MXK_MODULE_INTERNAL_H

#include "train_internal.h"

/**
 * One bucket of a BucketingModule: the symbol sym_gen gave for its key, bound on
 * every context with shared_exec = the default bucket's executor of that context,
 * so its parameters, gradients and aux states are views of the default bucket's
 * arrays and its internal memory comes from the default bucket's pool
 * (bucketing_module.py switch_bucket with shared_module). Bucket 0 is the default
 * bucket; its symbol is the module's own (sym NULL here).
 */
typedef struct module_bucket {
    int64_t key;
    mxk_symbol *sym; /**< owned; NULL for bucket 0 */
    mxk_executor *ex[MXKT_MAX_CTX];
    mxk_shape data_shape, label_shape;
    /** per module parameter: 1 when the bucket's symbol has it (update skips the others) */
    uint8_t *has_param;
} module_bucket;

/** Module state. */
struct mxkt_module {
    mxk_symbol *sym;
    char data_name[128], label_name[128];
    mxk_context ctx[MXKT_MAX_CTX];
    uint32_t nctx;
    char **args, **aux; /**< list_arguments / list_auxiliary_states */
    uint32_t nargs, naux;
    const char **pnames; /**< parameter names (args minus data and label) */
    uint32_t nparams;
    double *lr_mult, *wd_mult; /**< per parameter: __lr_mult__ (1), __wd_mult__ (by name) */
    char **init_attr;          /**< per parameter, then per aux state: __init__ or NULL */
    int bound, for_training, params_init, opt_init, has_label;
    int64_t batch, begin[MXKT_MAX_CTX], end[MXKT_MAX_CTX];
    mxk_shape data_shape, label_shape; /**< the current bucket's batch shapes */
    mxk_executor *ex[MXKT_MAX_CTX];    /**< the current bucket's executors */
    mxk_ndarray **params; /**< [c * nparams + i], borrowed from the default executors */
    mxk_ndarray **grads;
    mxk_ndarray **auxs; /**< [c * naux + i] */
    mxkt_optimizer opt;
    uint32_t nstates;
    mxk_ndarray **states; /**< [(c * nparams + i) * nstates + s] */
    mxk_kvstore *kv;      /**< several contexts or a dist store: sums gradients */
    int32_t kv_borrowed;  /**< kv is the caller's (init_optimizer_kv): not freed */
    /** the servers of kv run the optimizer (dist_async: upstream's update_on_kvstore) */
    int32_t update_on_kv;
    float *out_host;              /**< host copy of output 0 over all contexts */
    size_t out_cap;               /**< floats out_host holds */
    int64_t out_width;            /**< values per output row (output 0's size / its dims[0]) */
    int64_t out_rows;             /**< output rows of the current bucket over all contexts */
    int64_t scored;               /**< examples the last score counted */
    mxkt_progress_cb progress_cb; /**< mxkt_module_set_progress's, NULL: none */
    void *progress_user;
    /** the pass being reported: fit sets "train" / "validation" and the epoch */
    const char *progress_phase;
    int32_t progress_epoch;
    /* BucketingModule (mxkt_bucketing_module_create); sym_gen NULL: a plain Module */
    mxkt_sym_gen sym_gen;
    void *sym_gen_user;
    module_bucket *buckets; /**< nbuckets entries, [0] the default bucket */
    uint32_t nbuckets, cur;
};

/**
 * Sizes the host output buffer for the current executors: out_width and
 * out_rows from output 0 of each context, out_host grown when needed. Errors:
 * MXK_ERR_OUT_OF_MEMORY "out of memory".
 */
mxk_status mxkt_module_size_output(mxkt_module *m);
/** The context an executor's arrays live on (logical cpu(i) beyond the devices: cpu(0)). */
mxk_context mxkt_module_phys_ctx(mxk_context c);
/**
 * Frees every bucket but the default one and points the module back at the
 * default executors (unbind and free call it first). No-op for a plain Module.
 */
void mxkt_module_drop_buckets(mxkt_module *m);
/** Records the default bucket's executors and shapes after bind (BucketingModule only). */
void mxkt_module_bucket_bound(mxkt_module *m);
/**
 * Makes the batch's bucket current (BucketingModule.forward's switch_bucket with
 * the batch's bucket_key and provide_data): for an iterator with buckets
 * (default_bucket_key != 0) on a bucketing module; otherwise nothing. Errors: those
 * of mxkt_module_switch_bucket.
 */
mxk_status mxkt_module_switch_for(mxkt_module *m, const mxkt_iter *it);

#endif
