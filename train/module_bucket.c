/*
 * BucketingModule (python/mxnet/module/bucketing_module.py): a Module whose symbol
 * depends on the batch's bucket key. sym_gen(key) gives the bucket's symbol; bind
 * binds the default bucket; a batch of another key binds that bucket once, on each
 * context with shared_exec = the default bucket's executor (switch_bucket with
 * shared_module = the default module), so the bucket's parameters, gradients and aux
 * states are views of the default bucket's arrays and its internal memory is taken
 * from the default bucket's pool: a bucket no larger than the default allocates
 * nothing new, a larger one adds its extra chunks to the pool once, and the memory of
 * N buckets stays close to that of the largest. The optimizer, its states and the
 * KVStore belong to the module and serve every bucket (borrow_optimizer); update
 * touches the current bucket's parameters. Checkpoints save the default bucket's
 * symbol, as upstream.
 *
 * Differences from upstream: every bucket has the module's data and label names
 * (upstream's sym_gen also returns them per bucket), and a bucket's parameters must
 * be parameters of the default bucket (upstream would bind them unshared).
 */
#include <stdlib.h>
#include <string.h>

#include "module_internal.h"

/** BucketingModule(sym_gen, default_bucket_key, context). */
mxk_status mxkt_bucketing_module_create(mxkt_sym_gen sym_gen, void *user,
                                        int64_t default_bucket_key, const char *data_name,
                                        const char *label_name, const mxk_context *ctx,
                                        uint32_t num_ctx, mxkt_module **out) {
    *out = NULL;
    if (sym_gen == NULL)
        return mxkt_error(MXK_ERR_INVALID_ARGUMENT, "BucketingModule: sym_gen is NULL");
    if (default_bucket_key == 0)
        return mxkt_error(MXK_ERR_INVALID_ARGUMENT,
                          "BucketingModule: the default bucket key must not be 0");
    mxk_symbol *sym = NULL;
    mxk_status st = sym_gen(default_bucket_key, user, &sym);
    if (st != MXK_OK) {
        mxk_error_add_context("BucketingModule: sym_gen(%lld)", (long long)default_bucket_key);
        return st;
    }
    mxkt_module *m = NULL;
    st = mxkt_module_create(sym, data_name, label_name, ctx, num_ctx, &m);
    mxk_symbol_free(sym);
    if (st != MXK_OK)
        return st;
    m->buckets = calloc(1, sizeof *m->buckets);
    if (m->buckets == NULL) {
        mxkt_module_free(m);
        return mxkt_error(MXK_ERR_OUT_OF_MEMORY, "BucketingModule: out of memory");
    }
    m->buckets[0].key = default_bucket_key;
    m->sym_gen = sym_gen;
    m->sym_gen_user = user;
    *out = m;
    return MXK_OK;
}

/** Frees the buckets other than the default one; the default becomes current. */
void mxkt_module_drop_buckets(mxkt_module *m) {
    if (m->nbuckets == 0)
        return;
    for (uint32_t b = 1; b < m->nbuckets; b++) {
        module_bucket *k = &m->buckets[b];
        for (uint32_t c = 0; c < m->nctx; c++)
            mxk_executor_free(k->ex[c]);
        mxk_symbol_free(k->sym);
        free(k->has_param);
    }
    memcpy(m->ex, m->buckets[0].ex, sizeof m->ex);
    m->nbuckets = 1;
    m->cur = 0;
    m->data_shape = m->buckets[0].data_shape;
    m->label_shape = m->buckets[0].label_shape;
}

/**
 * Which module parameters the bucket's symbol has (*has, malloc'd); every argument
 * but data and label must be one. Errors: MXK_ERR_INVALID_ARGUMENT "bucket K:
 * parameter 'P' is not a parameter of the default bucket", MXK_ERR_OUT_OF_MEMORY,
 * the kernel's listing of the arguments.
 */
static mxk_status bucket_params(const mxkt_module *m, int64_t key, const mxk_symbol *sym,
                                uint8_t **has) {
    uint32_t na = 0;
    char **args = NULL;
    mxk_status st = mxk_symbol_list_names(sym, MXK_SYMBOL_ARGUMENTS, &na, &args);
    if (st != MXK_OK)
        return mxkt_kernel_error(st, "BucketingModule");
    *has = calloc(m->nparams + 1, 1);
    if (*has == NULL)
        st = mxkt_error(MXK_ERR_OUT_OF_MEMORY, "BucketingModule: out of memory");
    for (uint32_t a = 0; st == MXK_OK && a < na; a++) {
        if (strcmp(args[a], m->data_name) == 0 || strcmp(args[a], m->label_name) == 0)
            continue;
        uint32_t i = 0;
        while (i < m->nparams && strcmp(m->pnames[i], args[a]) != 0)
            i++;
        if (i == m->nparams)
            st = mxkt_error(MXK_ERR_INVALID_ARGUMENT,
                            "bucket %lld: parameter '%s' is not a parameter of the default "
                            "bucket",
                            (long long)key, args[a]);
        else
            (*has)[i] = 1;
    }
    mxk_string_list_free(args);
    if (st != MXK_OK) {
        free(*has);
        *has = NULL;
    }
    return st;
}

/** Binds a new bucket on every context, sharing the default bucket's executors. */
static mxk_status bucket_bind(mxkt_module *m, module_bucket *k) {
    MXKT_CHECK(bucket_params(m, k->key, k->sym, &k->has_param));
    for (uint32_t c = 0; c < m->nctx; c++) {
        const char *names[2] = {m->data_name, m->label_name};
        mxk_shape shapes[2] = {k->data_shape, k->label_shape};
        shapes[0].dims[0] = m->end[c] - m->begin[c];
        shapes[1].dims[0] = shapes[0].dims[0];
        uint32_t ns = m->has_label && k->label_shape.ndim > 0 ? 2 : 1;
        const char *rv[2] = {"null", "null"};
        mxk_status st =
            mxk_executor_simple_bind(k->sym, mxkt_module_phys_ctx(m->ctx[c]), ns, names, shapes,
                                     m->for_training ? "write" : "null", m->for_training ? ns : 0,
                                     names, rv, m->buckets[0].ex[c], &k->ex[c]);
        if (st != MXK_OK) {
            char what[64];
            snprintf(what, sizeof what, "bucket %lld: bind", (long long)k->key);
            return mxkt_kernel_error(st, what);
        }
    }
    return MXK_OK;
}

/** switch_bucket(bucket_key, data_shapes, label_shapes). */
mxk_status mxkt_module_switch_bucket(mxkt_module *m, int64_t bucket_key,
                                     const mxk_shape *data_shape, const mxk_shape *label_shape) {
    if (m->sym_gen == NULL)
        return mxkt_error(MXK_ERR_STATE, "switch_bucket: not a BucketingModule");
    if (!m->bound)
        return mxkt_error(MXK_ERR_STATE, "call bind before switching bucket");
    if (data_shape == NULL || data_shape->ndim < 1 || data_shape->dims[0] != m->batch)
        return mxkt_error(MXK_ERR_INVALID_ARGUMENT,
                          "switch_bucket: bucket %lld: the data must have the bound batch "
                          "size %lld as its first dimension",
                          (long long)bucket_key, (long long)m->batch);
    uint32_t b = 0;
    while (b < m->nbuckets && m->buckets[b].key != bucket_key)
        b++;
    if (b == m->nbuckets) {
        module_bucket *nb = realloc(m->buckets, (m->nbuckets + 1) * sizeof *nb);
        if (nb == NULL)
            return mxkt_error(MXK_ERR_OUT_OF_MEMORY, "BucketingModule: out of memory");
        m->buckets = nb;
        module_bucket *k = &nb[b];
        memset(k, 0, sizeof *k);
        k->key = bucket_key;
        k->data_shape = *data_shape;
        if (label_shape)
            k->label_shape = *label_shape;
        mxk_status st = m->sym_gen(bucket_key, m->sym_gen_user, &k->sym);
        if (st != MXK_OK) {
            mxk_error_add_context("BucketingModule: sym_gen(%lld)", (long long)bucket_key);
            return st;
        }
        st = bucket_bind(m, k);
        if (st != MXK_OK) {
            for (uint32_t c = 0; c < m->nctx; c++)
                mxk_executor_free(k->ex[c]);
            mxk_symbol_free(k->sym);
            free(k->has_param);
            return st;
        }
        m->nbuckets++;
    }
    m->cur = b;
    memcpy(m->ex, m->buckets[b].ex, sizeof m->ex);
    m->data_shape = m->buckets[b].data_shape;
    m->label_shape = m->buckets[b].label_shape;
    return mxkt_module_size_output(m);
}

/** The batch's bucket (module_internal.h). */
mxk_status mxkt_module_switch_for(mxkt_module *m, const mxkt_iter *it) {
    if (m->sym_gen == NULL || it->default_bucket_key == 0)
        return MXK_OK;
    if (m->buckets[m->cur].key == it->bucket_key)
        return MXK_OK;
    return mxkt_module_switch_bucket(m, it->bucket_key, &it->batch_data_shape,
                                     it->batch_label_shape.ndim > 0 ? &it->batch_label_shape
                                                                    : NULL);
}

/** Records the default bucket after bind (module_internal.h). */
void mxkt_module_bucket_bound(mxkt_module *m) {
    if (m->sym_gen == NULL)
        return;
    module_bucket *k = &m->buckets[0];
    memcpy(k->ex, m->ex, sizeof k->ex);
    k->data_shape = m->data_shape;
    k->label_shape = m->label_shape;
    m->nbuckets = 1;
    m->cur = 0;
}

/** The current bucket's key (0 for a plain Module). */
int64_t mxkt_module_bucket_key(const mxkt_module *m) {
    return m->nbuckets ? m->buckets[m->cur].key : 0;
}

/** Buckets bound so far (0 for a plain Module or before bind). */
uint32_t mxkt_module_num_buckets(const mxkt_module *m) {
    return m->nbuckets;
}
