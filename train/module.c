/*
 * The Module of mxk_train (python/mxnet/module/module.py, base_module.py,
 * executor_group.py): one executor per
 * context on its slice of the batch (_split_input_slice), gradients summed over
 * contexts through the KVStore, then every context runs the same optimizer update
 * (upstream's update_on_kvstore=False path, key i*ndev+k collapsed to one count per
 * parameter since all contexts apply identical updates), so parameters stay
 * identical on all contexts. fit / score / predict / checkpoints as base_module.py.
 *
 * Distributed stores (a type containing "dist", module.py _create_kvstore and
 * init_optimizer): a dist store is made even with one context; its init
 * broadcasts rank 0's parameters, which every worker then pulls into its
 * contexts (model.py _initialize_kvstore); a "_sync" store divides gradients by
 * batch_size * num_workers (rescale_grad). The exchange sums every worker's
 * gradients (an allreduce, docs/distributed.md) and each worker then runs the
 * same optimizer update on the same sum: upstream's update_on_kvstore=True runs
 * the optimizer once, on the servers; here it runs on every worker with the same
 * result, so parameters stay identical on all workers. An "async" store has servers
 * (dist_async): there the Module takes upstream's update_on_kvstore=True path
 * (model.py _update_params_on_kvstore): init_optimizer sends the optimizer to the
 * servers (mxkt_kvstore_set_optimizer), update pushes the gradients and pulls the
 * servers' weights into every context, and the workers keep no optimizer states.
 *
 * CPU contexts: cpu-blas serves one CPU device (all cores, as MXNet); logical
 * contexts cpu:1, cpu:2, ... bind their executors on cpu(0) memory, which is what
 * MXNet's cpu(i) amounts to as well.
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "module_internal.h"

/** Monotonic seconds. */
static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/** The context arrays are allocated on (logical cpu(i) → cpu(0), see the file comment). */
mxk_context mxkt_module_phys_ctx(mxk_context c) {
    if (c.dev_type == MXK_DEV_CPU && c.dev_id >= mxk_device_count(MXK_DEV_CPU))
        c.dev_id = 0;
    return c;
}

/**
 * The variable attributes the Module honours: __lr_mult__ and __wd_mult__ of each
 * parameter (optimizer.py set_lr_mult / set_wd_mult read them from the symbol's
 * attr_dict; the plain "lr_mult" key they ignore, and so does this) and __init__ of
 * parameters and aux states (module.py init_params passes them in InitDesc.attrs).
 */
static mxk_status module_read_attrs(mxkt_module *m) {
    m->lr_mult = calloc(m->nparams + 1, sizeof *m->lr_mult);
    m->wd_mult = calloc(m->nparams + 1, sizeof *m->wd_mult);
    m->init_attr = calloc(m->nparams + m->naux + 1, sizeof *m->init_attr);
    if (!m->lr_mult || !m->wd_mult || !m->init_attr)
        return mxkt_error(MXK_ERR_OUT_OF_MEMORY, "out of memory");
    for (uint32_t i = 0; i < m->nparams; i++) {
        m->lr_mult[i] = 1.0;
        m->wd_mult[i] = mxkt_optimizer_wd_mult(m->pnames[i]);
    }
    uint32_t n = 0;
    char **kv = NULL;
    mxk_status st = mxk_symbol_list_attrs(m->sym, &n, &kv);
    if (st != MXK_OK)
        return mxkt_kernel_error(st, "Module");
    for (uint32_t k = 0; k < n && st == MXK_OK; k++) {
        const char *dollar = strrchr(kv[2 * k], '$'), *val = kv[2 * k + 1];
        size_t len = dollar ? (size_t)(dollar - kv[2 * k]) : 0;
        uint32_t v = 0;
        for (; v < m->nparams + m->naux; v++) {
            const char *name = v < m->nparams ? m->pnames[v] : m->aux[v - m->nparams];
            if (dollar && strlen(name) == len && strncmp(name, kv[2 * k], len) == 0)
                break;
        }
        if (v == m->nparams + m->naux)
            continue;
        const char *key = dollar + 1;
        if (strcmp(key, "__init__") == 0) {
            m->init_attr[v] = strdup(val);
            if (m->init_attr[v] == NULL)
                st = mxkt_error(MXK_ERR_OUT_OF_MEMORY, "out of memory");
        } else if (v < m->nparams &&
                   (strcmp(key, "__lr_mult__") == 0 || strcmp(key, "__wd_mult__") == 0)) {
            char *end = NULL;
            double x = strtod(val, &end);
            if (end == val || *end != '\0' || !isfinite(x))
                st = mxkt_error(MXK_ERR_INVALID_ARGUMENT, "%s: %s '%s' is not a number",
                                m->pnames[v], key, val);
            *(key[2] == 'l' ? &m->lr_mult[v] : &m->wd_mult[v]) = x;
        }
    }
    mxk_string_list_free(kv);
    return st;
}

/**
 * The data input must be an argument of the symbol (python/mxnet/module/
 * base_module.py, _check_input_names): MXK_ERR_INVALID_ARGUMENT with upstream's
 * message listing the arguments that are not parameters as the candidates.
 */
static mxk_status module_check_data_name(const mxkt_module *m) {
    char cand[512] = "";
    size_t used = 0;
    for (uint32_t i = 0; i < m->nargs; i++) {
        if (strcmp(m->args[i], m->data_name) == 0)
            return MXK_OK;
        static const char *const params[] = {"_weight", "_bias", "_gamma", "_beta"};
        size_t n = strlen(m->args[i]), k = 0;
        while (k < 4 && !(n >= strlen(params[k]) &&
                          strcmp(m->args[i] + n - strlen(params[k]), params[k]) == 0))
            k++;
        if (k == 4 && used < sizeof cand)
            used += (size_t)snprintf(cand + used, sizeof cand - used, "\n\t%s", m->args[i]);
    }
    return mxkt_error(MXK_ERR_INVALID_ARGUMENT,
                      "You created Module with Module(..., data_names=['%s']) but input with "
                      "name '%s' is not found in symbol.list_arguments(). Did you mean one of:%s",
                      m->data_name, m->data_name, cand);
}

/** Module(symbol, data_names, label_names, context). */
mxk_status mxkt_module_create(const mxk_symbol *sym, const char *data_name, const char *label_name,
                              const mxk_context *ctx, uint32_t num_ctx, mxkt_module **out) {
    if (num_ctx < 1 || num_ctx > MXKT_MAX_CTX)
        return mxkt_error(MXK_ERR_INVALID_ARGUMENT, "Module: 1 to %d contexts", MXKT_MAX_CTX);
    mxkt_module *m = calloc(1, sizeof *m);
    if (m == NULL)
        return mxkt_error(MXK_ERR_OUT_OF_MEMORY, "out of memory");
    m->progress_epoch = -1;
    snprintf(m->data_name, sizeof m->data_name, "%s", data_name ? data_name : "data");
    snprintf(m->label_name, sizeof m->label_name, "%s", label_name ? label_name : "softmax_label");
    memcpy(m->ctx, ctx, num_ctx * sizeof *ctx);
    m->nctx = num_ctx;
    mxk_status st = mxk_symbol_copy(sym, &m->sym);
    if (st == MXK_OK)
        st = mxk_symbol_list_names(m->sym, MXK_SYMBOL_ARGUMENTS, &m->nargs, &m->args);
    if (st == MXK_OK)
        st = mxk_symbol_list_names(m->sym, MXK_SYMBOL_AUX_STATES, &m->naux, &m->aux);
    if (st != MXK_OK) {
        mxkt_module_free(m);
        return mxkt_kernel_error(st, "Module");
    }
    m->pnames = calloc(m->nargs + 1, sizeof *m->pnames);
    if (m->pnames == NULL) {
        mxkt_module_free(m);
        return mxkt_error(MXK_ERR_OUT_OF_MEMORY, "out of memory");
    }
    st = module_check_data_name(m);
    if (st != MXK_OK) {
        mxkt_module_free(m);
        return st;
    }
    for (uint32_t i = 0; i < m->nargs; i++) {
        if (strcmp(m->args[i], m->data_name) == 0)
            continue;
        if (strcmp(m->args[i], m->label_name) == 0) {
            m->has_label = 1;
            continue;
        }
        m->pnames[m->nparams++] = m->args[i];
    }
    st = module_read_attrs(m);
    if (st != MXK_OK) {
        mxkt_module_free(m);
        return st;
    }
    *out = m;
    return MXK_OK;
}

/** Drops what init_optimizer made (states, KVStore): back to no optimizer. */
static void module_drop_optimizer(mxkt_module *m) {
    if (!m->kv_borrowed)
        mxk_kvstore_free(m->kv);
    m->kv_borrowed = 0;
    m->kv = NULL;
    m->update_on_kv = 0;
    if (m->states)
        for (uint32_t i = 0; i < m->nctx * m->nparams * m->nstates; i++)
            mxk_ndarray_free(m->states[i]);
    free(m->states);
    m->states = NULL;
    m->opt_init = 0;
}

/** Drops what bind made (executors and their array tables): back to unbound. */
static void module_unbind(mxkt_module *m) {
    mxkt_module_drop_buckets(m);
    for (uint32_t c = 0; c < m->nctx; c++) {
        mxk_executor_free(m->ex[c]);
        m->ex[c] = NULL;
    }
    free(m->params);
    free(m->grads);
    free(m->auxs);
    free(m->out_host);
    m->params = m->grads = m->auxs = NULL;
    m->out_host = NULL;
    m->out_cap = 0;
    m->bound = 0;
}

/** Frees a module. */
void mxkt_module_free(mxkt_module *m) {
    if (m == NULL)
        return;
    mxk_wait_all();
    module_drop_optimizer(m);
    module_unbind(m);
    if (m->init_attr)
        for (uint32_t i = 0; i < m->nparams + m->naux; i++)
            free(m->init_attr[i]);
    free(m->init_attr);
    free(m->lr_mult);
    free(m->wd_mult);
    free(m->pnames);
    free(m->buckets);
    mxk_string_list_free(m->args);
    mxk_string_list_free(m->aux);
    mxk_symbol_free(m->sym);
    free(m);
}

static mxk_status module_bind_executors(mxkt_module *m, const mxk_shape *data_shape,
                                        const mxk_shape *label_shape, int32_t for_training);

/** bind(data_shapes, label_shapes, for_training). */
mxk_status mxkt_module_bind(mxkt_module *m, const mxk_shape *data_shape,
                            const mxk_shape *label_shape, int32_t for_training) {
    if (m->bound) {
        fprintf(stderr, "WARNING: Already bound, ignoring bind()\n");
        return MXK_OK;
    }
    double wl[MXKT_MAX_CTX];
    for (uint32_t c = 0; c < m->nctx; c++)
        wl[c] = 1.0;
    m->batch = data_shape->dims[0];
    MXKT_CHECK(mxkt_split_input_slice(m->batch, wl, (int32_t)m->nctx, m->begin, m->end));
    m->data_shape = *data_shape;
    if (label_shape)
        m->label_shape = *label_shape;
    m->for_training = for_training;
    mxk_status st = module_bind_executors(m, data_shape, label_shape, for_training);
    if (st != MXK_OK) {
        module_unbind(m);
        return st;
    }
    m->bound = 1;
    mxkt_module_bucket_bound(m);
    return MXK_OK;
}

/** The executors of bind, one per context, and the module's tables of their arrays. */
static mxk_status module_bind_executors(mxkt_module *m, const mxk_shape *data_shape,
                                        const mxk_shape *label_shape, int32_t for_training) {
    m->params = calloc((size_t)m->nctx * m->nparams + 1, sizeof *m->params);
    m->grads = calloc((size_t)m->nctx * m->nparams + 1, sizeof *m->grads);
    m->auxs = calloc((size_t)m->nctx * m->naux + 1, sizeof *m->auxs);
    if (!m->params || !m->grads || !m->auxs)
        return mxkt_error(MXK_ERR_OUT_OF_MEMORY, "out of memory");
    for (uint32_t c = 0; c < m->nctx; c++) {
        const char *names[2] = {m->data_name, m->label_name};
        mxk_shape shapes[2] = {*data_shape, m->label_shape};
        shapes[0].dims[0] = m->end[c] - m->begin[c];
        shapes[1].dims[0] = shapes[0].dims[0];
        uint32_t ns = m->has_label && label_shape ? 2 : 1;
        const char *rv[2] = {"null", "null"};
        mxk_status st = mxk_executor_simple_bind(m->sym, mxkt_module_phys_ctx(m->ctx[c]), ns, names,
                                                 shapes, for_training ? "write" : "null",
                                                 for_training ? ns : 0, names, rv, NULL, &m->ex[c]);
        if (st != MXK_OK)
            return mxkt_kernel_error(st, "bind");
        for (uint32_t i = 0; i < m->nparams; i++) {
            m->params[c * m->nparams + i] = mxk_executor_arg(m->ex[c], m->pnames[i]);
            m->grads[c * m->nparams + i] = mxk_executor_grad(m->ex[c], m->pnames[i]);
        }
        for (uint32_t i = 0; i < m->naux; i++)
            m->auxs[c * m->naux + i] = mxk_executor_aux(m->ex[c], m->aux[i]);
    }
    return mxkt_module_size_output(m);
}

/** Sizes out_host for the current executors (module_internal.h). */
mxk_status mxkt_module_size_output(mxkt_module *m) {
    mxk_shape os = mxk_ndarray_shape(mxk_executor_output(m->ex[0], 0));
    m->out_width = os.ndim > 0 && os.dims[0] > 0 ? mxkt_shape_size(&os) / os.dims[0] : 1;
    m->out_rows = 0;
    for (uint32_t c = 0; c < m->nctx; c++) {
        os = mxk_ndarray_shape(mxk_executor_output(m->ex[c], 0));
        m->out_rows += os.ndim > 0 ? os.dims[0] : 1;
    }
    size_t need = (size_t)(m->out_rows * m->out_width);
    if (need > m->out_cap) {
        float *p = realloc(m->out_host, (need + 1) * sizeof(float));
        if (p == NULL)
            return mxkt_error(MXK_ERR_OUT_OF_MEMORY, "out of memory");
        m->out_host = p;
        m->out_cap = need;
    }
    return MXK_OK;
}

/** Compares names for qsort (sorted visiting order of init_params). */
static int cmp_names(const void *a, const void *b) {
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/** Copies host values into every context's copy of `arr_of_ctx`. */
static mxk_status fill_all(mxk_ndarray **arrays, uint32_t stride, uint32_t idx, uint32_t nctx,
                           const float *values, int64_t n) {
    for (uint32_t c = 0; c < nctx; c++) {
        mxk_status st = mxk_ndarray_copy_from_host(arrays[c * stride + idx], values,
                                                   (uint64_t)n * sizeof(float));
        if (st != MXK_OK)
            return mxkt_kernel_error(st, "init_params");
    }
    return MXK_OK;
}

/** Finds `name` (bare, "arg:name" or "aux:name") among given names; -1 if absent. */
static int find_given(uint32_t n, const char *const *names, const char *name) {
    for (uint32_t i = 0; i < n; i++) {
        const char *g = names[i];
        if (strncmp(g, "arg:", 4) == 0 || strncmp(g, "aux:", 4) == 0)
            g += 4;
        if (strcmp(g, name) == 0)
            return (int)i;
    }
    return -1;
}

/** init_params(initializer, arg_params, aux_params, allow_missing, force_init). */
mxk_status mxkt_module_init_params(mxkt_module *m, const mxkt_initializer *init, uint32_t num_given,
                                   const char *const *names, mxk_ndarray *const *values,
                                   int32_t allow_missing, int32_t force_init) {
    if (!m->bound)
        return mxkt_error(MXK_ERR_STATE, "call bind before initializing the parameters");
    if (m->params_init && !force_init) {
        fprintf(stderr, "WARNING: Parameters already initialized and force_init=False. "
                        "init_params call ignored.\n");
        return MXK_OK;
    }
    uint32_t total = m->nparams + m->naux;
    const char **order = malloc((total + 1) * sizeof *order);
    if (order == NULL)
        return mxkt_error(MXK_ERR_OUT_OF_MEMORY, "out of memory");
    for (uint32_t i = 0; i < m->nparams; i++)
        order[i] = m->pnames[i];
    for (uint32_t i = 0; i < m->naux; i++)
        order[m->nparams + i] = m->aux[i];
    /* upstream visits sorted(arg_params), then sorted(aux_params) */
    qsort(order, m->nparams, sizeof *order, cmp_names);
    qsort(order + m->nparams, m->naux, sizeof *order, cmp_names);
    mxk_status st = MXK_OK;
    for (uint32_t k = 0; k < total && st == MXK_OK; k++) {
        const char *name = order[k];
        mxk_ndarray **arrs = m->params;
        uint32_t stride = m->nparams, idx = 0, var = 0;
        for (idx = 0; idx < m->nparams && strcmp(m->pnames[idx], name) != 0; idx++)
            ;
        var = idx;
        if (idx == m->nparams) {
            arrs = m->auxs;
            stride = m->naux;
            for (idx = 0; idx < m->naux && strcmp(m->aux[idx], name) != 0; idx++)
                ;
            var = m->nparams + idx;
        }
        mxk_shape shape = mxk_ndarray_shape(arrs[idx]);
        int64_t n = mxkt_shape_size(&shape);
        int g = values ? find_given(num_given, names, name) : -1;
        if (g >= 0) {
            for (uint32_t c = 0; c < m->nctx && st == MXK_OK; c++)
                st = mxk_ndarray_copy_to(values[g], arrs[c * stride + idx]);
            if (st != MXK_OK)
                st = mxkt_kernel_error(st, name);
            continue;
        }
        if (values && !allow_missing) {
            st = mxkt_error(MXK_ERR_NOT_FOUND, "%s is not presented", name);
            break;
        }
        if (init == NULL) {
            st = mxkt_error(MXK_ERR_INVALID_ARGUMENT,
                            "%s is not presented and no initializer was given", name);
            break;
        }
        float *host = malloc((size_t)n * sizeof(float));
        if (host == NULL) {
            st = mxkt_error(MXK_ERR_OUT_OF_MEMORY, "out of memory");
            break;
        }
        st = mxkt_initializer_fill_desc(init, name, m->init_attr[var], &shape, host);
        if (st == MXK_OK)
            st = fill_all(arrs, stride, idx, m->nctx, host, n);
        if (st == MXK_OK && (st = mxk_wait_all()) != MXK_OK)
            st = mxkt_kernel_error(st, name);
        free(host);
    }
    free(order);
    if (st == MXK_OK)
        m->params_init = 1;
    return st;
}

static mxk_status module_make_optimizer(mxkt_module *m, const char *kvstore, mxk_kvstore *given);

/** init_optimizer with a store type (`kvstore`) or a store object (`given`). */
static mxk_status module_init_optimizer(mxkt_module *m, const char *kvstore, mxk_kvstore *given,
                                        const mxkt_optimizer *opt, int32_t keep_rescale) {
    if (!m->bound || !m->params_init)
        return mxkt_error(MXK_ERR_STATE, "bind and init_params before init_optimizer");
    if (m->opt_init) {
        fprintf(stderr, "WARNING: optimizer already initialized, ignoring...\n");
        return MXK_OK;
    }
    if (m->nparams > MXKT_MAX_PARAMS)
        return mxkt_error(MXK_ERR_UNSUPPORTED, "more than %d parameters", MXKT_MAX_PARAMS);
    m->opt = *opt;
    if (!keep_rescale)
        m->opt.rescale_grad = 1.0 / (double)m->batch;
    MXKT_CHECK(mxkt_optimizer_check(&m->opt));
    mxk_status st = module_make_optimizer(m, kvstore, given);
    if (st != MXK_OK) {
        module_drop_optimizer(m);
        return st;
    }
    /* module.py init_optimizer: a dist "_sync" store averages over the total batch */
    const char *type = m->kv ? mxk_kvstore_type(m->kv) : "";
    if (!keep_rescale && strstr(type, "dist") && strstr(type, "_sync"))
        m->opt.rescale_grad = 1.0 / ((double)m->batch * (double)mxk_kvstore_num_workers(m->kv));
    /* module.py init_optimizer: with update_on_kvstore, kvstore.set_optimizer */
    if (m->update_on_kv) {
        const char *const *names = (const char *const *)m->pnames;
        st = mxkt_kvstore_set_optimizer(m->kv, &m->opt, m->nparams, names, m->lr_mult, m->wd_mult);
        if (st != MXK_OK) {
            module_drop_optimizer(m);
            return st;
        }
    }
    m->opt_init = 1;
    return MXK_OK;
}

/** init_optimizer(kvstore, optimizer). */
mxk_status mxkt_module_init_optimizer(mxkt_module *m, const char *kvstore,
                                      const mxkt_optimizer *opt, int32_t keep_rescale) {
    return module_init_optimizer(m, kvstore, NULL, opt, keep_rescale);
}

/** init_optimizer(kvstore=KVStore object, optimizer). */
mxk_status mxkt_module_init_optimizer_kv(mxkt_module *m, mxk_kvstore *kv, const mxkt_optimizer *opt,
                                         int32_t keep_rescale) {
    if (kv == NULL)
        return mxkt_error(MXK_ERR_INVALID_ARGUMENT, "init_optimizer: the kvstore is NULL");
    return module_init_optimizer(m, NULL, kv, opt, keep_rescale);
}

/**
 * Pulls every parameter from the store into all contexts (model.py
 * _initialize_kvstore's pull): after a dist store's init, rank 0's values.
 */
static mxk_status module_pull_params(mxkt_module *m) {
    for (uint32_t i = 0; i < m->nparams; i++) {
        mxk_ndarray *p[MXKT_MAX_CTX];
        const char *keys[MXKT_MAX_CTX];
        for (uint32_t c = 0; c < m->nctx; c++) {
            p[c] = m->params[c * m->nparams + i];
            keys[c] = m->pnames[i];
        }
        mxk_status st = mxk_kvstore_pull(m->kv, m->nctx, keys, p, 0);
        if (st != MXK_OK)
            return st;
    }
    return MXK_OK;
}

/**
 * The optimizer states (zeros, per context) and the KVStore: `given` (borrowed),
 * else one of type `kvstore` with several contexts or a dist type.
 */
static mxk_status module_make_optimizer(mxkt_module *m, const char *kvstore, mxk_kvstore *given) {
    /* upstream: async stores update on the servers (update_on_kvstore), so no local states */
    const char *type = given ? mxk_kvstore_type(given) : kvstore;
    m->update_on_kv = type && strstr(type, "dist") && strstr(type, "async");
    m->nstates = m->update_on_kv ? 0 : mxkt_optimizer_num_states(&m->opt);
    size_t ns = (size_t)m->nctx * m->nparams * m->nstates;
    m->states = calloc(ns + 1, sizeof *m->states);
    if (m->states == NULL)
        return mxkt_error(MXK_ERR_OUT_OF_MEMORY, "out of memory");
    for (uint32_t c = 0; c < m->nctx; c++)
        for (uint32_t i = 0; i < m->nparams; i++)
            for (uint32_t s = 0; s < m->nstates; s++) {
                mxk_shape sh = mxk_ndarray_shape(m->params[c * m->nparams + i]);
                mxk_status st =
                    mxk_ndarray_full(&sh, MXK_FLOAT32, mxkt_module_phys_ctx(m->ctx[c]), 0.0,
                                     &m->states[(c * m->nparams + i) * m->nstates + s]);
                if (st != MXK_OK)
                    return mxkt_kernel_error(st, "optimizer state");
            }
    /* upstream _create_kvstore: a string kvstore with one device and no "dist" → none */
    mxk_status st = MXK_OK;
    if (given) {
        m->kv = given;
        m->kv_borrowed = 1;
    } else if (m->nctx > 1 || (kvstore && strstr(kvstore, "dist"))) {
        if (kvstore == NULL || kvstore[0] == '\0' || strcmp(kvstore, "none") == 0)
            kvstore = "local";
        st = mxk_kvstore_create(kvstore, &m->kv);
    }
    if (m->kv == NULL) /* none needed, or create failed */
        return st == MXK_OK ? MXK_OK : mxkt_kernel_error(st, "kvstore");
    st = mxk_kvstore_init(m->kv, m->nparams, m->pnames, m->params);
    if (st == MXK_OK && strstr(mxk_kvstore_type(m->kv), "dist"))
        st = module_pull_params(m);
    return st == MXK_OK ? MXK_OK : mxkt_kernel_error(st, "kvstore");
}

/** Copies rows [b, e) of `src` into `dst` (whole array when the shapes agree). */
static mxk_status copy_slice(mxk_ndarray *src, int64_t b, int64_t e, mxk_ndarray *dst) {
    mxk_shape ss = mxk_ndarray_shape(src);
    if (b == 0 && e == ss.dims[0])
        return mxk_ndarray_copy_to(src, dst);
    mxk_ndarray *view = NULL;
    mxk_status st = mxk_ndarray_slice(src, b, e, &view);
    if (st == MXK_OK)
        st = mxk_ndarray_copy_to(view, dst);
    mxk_ndarray_free(view);
    return st;
}

/** forward(batch, is_train). */
mxk_status mxkt_module_forward(mxkt_module *m, mxk_ndarray *data, mxk_ndarray *label,
                               int32_t is_train) {
    if (!m->bound)
        return mxkt_error(MXK_ERR_STATE, "call bind before forward");
    for (uint32_t c = 0; c < m->nctx; c++) {
        mxk_status st =
            copy_slice(data, m->begin[c], m->end[c], mxk_executor_arg(m->ex[c], m->data_name));
        if (st == MXK_OK && label && m->has_label) {
            mxk_ndarray *l = mxk_executor_arg(m->ex[c], m->label_name);
            if (l)
                st = copy_slice(label, m->begin[c], m->end[c], l);
        }
        if (st == MXK_OK)
            st = mxk_executor_forward(m->ex[c], is_train);
        if (st != MXK_OK)
            return mxkt_kernel_error(st, "forward");
    }
    return MXK_OK;
}

/** backward(). */
mxk_status mxkt_module_backward(mxkt_module *m) {
    if (!m->for_training)
        return mxkt_error(MXK_ERR_STATE, "re-bind with for_training=True to run backward");
    for (uint32_t c = 0; c < m->nctx; c++) {
        mxk_status st = mxk_executor_backward(m->ex[c], 0, NULL);
        if (st != MXK_OK)
            return mxkt_kernel_error(st, "backward");
    }
    return MXK_OK;
}

/** forward_backward(batch). */
mxk_status mxkt_module_forward_backward(mxkt_module *m, mxk_ndarray *data, mxk_ndarray *label) {
    MXKT_CHECK(mxkt_module_forward(m, data, label, 1));
    return mxkt_module_backward(m);
}

/** update(): aggregate gradients over contexts, then the optimizer on every context. */
mxk_status mxkt_module_update(mxkt_module *m) {
    if (!m->opt_init)
        return mxkt_error(MXK_ERR_STATE, "call init_optimizer before update");
    const uint8_t *has = m->nbuckets ? m->buckets[m->cur].has_param : NULL;
    for (uint32_t i = 0; i < m->nparams; i++) {
        /* bucketing_module.py update: the current bucket's parameters only */
        if (m->grads[i] == NULL || (has && !has[i]))
            continue;
        if (m->nctx > 1 || m->kv) {
            mxk_ndarray *g[MXKT_MAX_CTX];
            const char *keys[MXKT_MAX_CTX];
            for (uint32_t c = 0; c < m->nctx; c++) {
                g[c] = m->grads[c * m->nparams + i];
                keys[c] = m->pnames[i];
            }
            if (m->kv == NULL)
                return mxkt_error(MXK_ERR_STATE, "several contexts need a kvstore");
            /* model.py _update_params_on_kvstore: the servers update, workers pull weights */
            mxk_ndarray *w[MXKT_MAX_CTX];
            for (uint32_t c = 0; c < m->nctx; c++)
                w[c] = m->update_on_kv ? m->params[c * m->nparams + i] : g[c];
            mxk_status st = mxk_kvstore_push(m->kv, m->nctx, keys, g, -(int32_t)i);
            if (st == MXK_OK)
                st = mxk_kvstore_pull(m->kv, m->nctx, keys, w, -(int32_t)i);
            if (st != MXK_OK)
                return mxkt_kernel_error(st, "gradient aggregation");
            if (m->update_on_kv)
                continue;
        }
        /* optimizer.py _get_lr / _get_wd: times the parameter's multipliers */
        double lr = mxkt_optimizer_step(&m->opt, (int32_t)i) * m->lr_mult[i];
        double wdm = m->wd_mult[i];
        for (uint32_t c = 0; c < m->nctx; c++) {
            uint32_t k = c * m->nparams + i;
            MXKT_CHECK(mxkt_optimizer_apply(&m->opt, lr, wdm, m->params[k], m->grads[k],
                                            m->nstates ? &m->states[k * m->nstates] : NULL));
        }
    }
    return MXK_OK;
}

/** get_outputs()[0] merged over contexts into host memory. */
mxk_status mxkt_module_get_output(mxkt_module *m, float *out, int64_t *width) {
    int64_t row = 0;
    for (uint32_t c = 0; c < m->nctx; c++) {
        mxk_ndarray *o = mxk_executor_output(m->ex[c], 0);
        mxk_shape os = mxk_ndarray_shape(o);
        int64_t rows = os.ndim > 0 ? os.dims[0] : 1;
        mxk_status st = mxk_ndarray_copy_to_host(o, out + row * m->out_width,
                                                 (uint64_t)(rows * m->out_width) * sizeof(float));
        if (st != MXK_OK)
            return mxkt_kernel_error(st, "output");
        row += rows;
    }
    *width = m->out_width;
    return MXK_OK;
}

/** update_metric(metric, labels). */
mxk_status mxkt_module_update_metric(mxkt_module *m, mxkt_metric *metrics, uint32_t num_metrics,
                                     const float *labels, int64_t n) {
    int64_t w = 0;
    MXKT_CHECK(mxkt_module_get_output(m, m->out_host, &w));
    for (uint32_t k = 0; k < num_metrics; k++)
        mxkt_metric_update(&metrics[k], labels, m->out_host, n, w);
    return MXK_OK;
}

/** Number of parameters. */
uint32_t mxkt_module_num_params(const mxkt_module *m) {
    return m->nparams;
}
/** Name of parameter i. */
const char *mxkt_module_param_name(const mxkt_module *m, uint32_t i) {
    return i < m->nparams ? m->pnames[i] : NULL;
}
/** Number of aux states. */
uint32_t mxkt_module_num_aux(const mxkt_module *m) {
    return m->naux;
}
/** Name of aux state i. */
const char *mxkt_module_aux_name(const mxkt_module *m, uint32_t i) {
    return i < m->naux ? m->aux[i] : NULL;
}
/** Context 0's parameter i. */
mxk_ndarray *mxkt_module_param(const mxkt_module *m, uint32_t i) {
    return m->bound && i < m->nparams ? m->params[i] : NULL;
}
/** Context 0's aux state i. */
mxk_ndarray *mxkt_module_aux(const mxkt_module *m, uint32_t i) {
    return m->bound && i < m->naux ? m->auxs[i] : NULL;
}
/** Context c's parameter i. */
mxk_ndarray *mxkt_module_param_on(const mxkt_module *m, uint32_t c, uint32_t i) {
    return m->bound && c < m->nctx && i < m->nparams ? m->params[c * m->nparams + i] : NULL;
}
/** Number of contexts. */
uint32_t mxkt_module_num_ctx(const mxkt_module *m) {
    return m->nctx;
}

mxk_executor *mxkt_module_executor(const mxkt_module *m, uint32_t c) {
    return m->bound && c < m->nctx ? m->ex[c] : NULL;
}

/** reresolve(): every context's executor picks its kernels by the preference now. */
mxk_status mxkt_module_reresolve(mxkt_module *m) {
    if (!m->bound)
        return mxkt_error(MXK_ERR_STATE, "call bind before reresolve");
    /* a BucketingModule: every bucket's executors */
    for (uint32_t b = 0; b < (m->nbuckets ? m->nbuckets : 1); b++)
        for (uint32_t c = 0; c < m->nctx; c++) {
            mxk_status st = mxk_executor_reresolve(m->nbuckets ? m->buckets[b].ex[c] : m->ex[c]);
            if (st != MXK_OK)
                return mxkt_kernel_error(st, "reresolve");
        }
    return MXK_OK;
}

/** Copies a given value into a module array; a failure names the value. */
static mxk_status copy_named(mxk_ndarray *src, mxk_ndarray *dst, const char *name) {
    mxk_status st = mxk_ndarray_copy_to(src, dst);
    if (st == MXK_OK)
        return MXK_OK;
    char what[300];
    snprintf(what, sizeof what, "set_params: %s", name);
    return mxkt_kernel_error(st, what);
}

/**
 * The module array a given name sets: "arg:NAME" a parameter, "aux:NAME" an aux
 * state, a bare name either (parameters first). Returns the index in
 * [0, nparams + naux) (aux states after the parameters), or -1.
 */
static int64_t module_slot(const mxkt_module *m, const char *name) {
    int aux_only = strncmp(name, "aux:", 4) == 0, arg_only = strncmp(name, "arg:", 4) == 0;
    const char *n = aux_only || arg_only ? name + 4 : name;
    for (uint32_t i = 0; !aux_only && i < m->nparams; i++)
        if (strcmp(m->pnames[i], n) == 0)
            return i;
    for (uint32_t i = 0; !arg_only && i < m->naux; i++)
        if (strcmp(m->aux[i], n) == 0)
            return (int64_t)m->nparams + i;
    return -1;
}

/** set_params(arg_params, aux_params, allow_extra): checks every name, then copies. */
mxk_status mxkt_module_set_params(mxkt_module *m, uint32_t num, const char *const *names,
                                  mxk_ndarray *const *values, int32_t allow_extra) {
    if (!m->bound)
        return mxkt_error(MXK_ERR_STATE, "call bind before set_params");
    uint32_t total = m->nparams + m->naux;
    char *given = calloc((size_t)total + 1, 1);
    if (given == NULL)
        return mxkt_error(MXK_ERR_OUT_OF_MEMORY, "set_params: out of memory");
    mxk_status st = MXK_OK;
    for (uint32_t k = 0; k < num && st == MXK_OK; k++) {
        int64_t slot = module_slot(m, names[k]);
        if (slot >= 0)
            given[slot] = 1;
        else if (!allow_extra)
            st = mxkt_error(MXK_ERR_NOT_FOUND, "Find name \"%s\" that is not in the arguments",
                            names[k]);
    }
    /* the first values must cover everything (upstream init_params, allow_missing=False) */
    for (uint32_t i = 0; i < total && st == MXK_OK && !m->params_init; i++)
        if (!given[i])
            st = mxkt_error(MXK_ERR_NOT_FOUND, "%s is not presented",
                            i < m->nparams ? m->pnames[i] : m->aux[i - m->nparams]);
    free(given);
    for (uint32_t k = 0; k < num && st == MXK_OK; k++) {
        int64_t slot = module_slot(m, names[k]);
        for (uint32_t c = 0; slot >= 0 && c < m->nctx && st == MXK_OK; c++)
            st = copy_named(values[k],
                            slot < m->nparams ? m->params[c * m->nparams + slot]
                                              : m->auxs[c * m->naux + (slot - m->nparams)],
                            names[k]);
    }
    if (st != MXK_OK)
        return st;
    m->params_init = 1;
    st = mxk_wait_all();
    return st == MXK_OK ? st : mxkt_kernel_error(st, "set_params");
}

/**
 * The average over contexts of array i of a per-context table `arr` (stride `per`)
 * into a new CPU array (float32: summed in float64; other dtypes: context 0's copy).
 */
static mxk_status average_over_ctx(const mxkt_module *m, mxk_ndarray *const *arr, uint32_t per,
                                   uint32_t i, mxk_ndarray **out) {
    mxk_ndarray *a0 = arr[i];
    mxk_shape shape = mxk_ndarray_shape(a0);
    int32_t dtype = mxk_ndarray_dtype(a0);
    mxk_status st = mxk_ndarray_create(&shape, dtype, (mxk_context){MXK_DEV_CPU, 0}, out);
    if (st == MXK_OK && (m->nctx == 1 || dtype != MXK_FLOAT32))
        st = mxk_ndarray_copy_to(a0, *out);
    if (st != MXK_OK || m->nctx == 1 || dtype != MXK_FLOAT32)
        return st == MXK_OK ? MXK_OK : mxkt_kernel_error(st, "get_params");
    uint64_t n = mxk_ndarray_size(a0);
    float *host = malloc(n * sizeof(float)), *dst = NULL;
    double *sum = calloc(n, sizeof(double));
    if (host == NULL || sum == NULL)
        st = mxkt_error(MXK_ERR_OUT_OF_MEMORY, "get_params: out of memory");
    for (uint32_t c = 0; st == MXK_OK && c < m->nctx; c++) {
        st = mxk_ndarray_copy_to_host(arr[c * per + i], host, n * sizeof(float));
        for (uint64_t k = 0; st == MXK_OK && k < n; k++)
            sum[k] += host[k];
    }
    if (st == MXK_OK && (st = mxk_ndarray_data(*out, (void **)&dst)) == MXK_OK)
        for (uint64_t k = 0; k < n; k++)
            dst[k] = (float)(sum[k] / m->nctx);
    free(host);
    free(sum);
    return st == MXK_OK ? MXK_OK : mxkt_kernel_error(st, "get_params");
}

/** get_params (see mxk_train.h). */
mxk_status mxkt_module_get_params(const mxkt_module *m, uint32_t *num, char ***names,
                                  mxk_ndarray ***values) {
    *num = 0;
    *names = NULL;
    *values = NULL;
    if (!m->bound || !m->params_init)
        return mxkt_error(MXK_ERR_STATE, "call bind and init_params before get_params");
    uint32_t n = m->nparams + m->naux;
    char **nm = calloc(n + 1, sizeof *nm);
    mxk_ndarray **vals = calloc(n + 1, sizeof *vals);
    mxk_status st = nm && vals ? MXK_OK : mxkt_error(MXK_ERR_OUT_OF_MEMORY, "out of memory");
    for (uint32_t i = 0; st == MXK_OK && i < n; i++) {
        int arg = i < m->nparams;
        const char *base = arg ? m->pnames[i] : m->aux[i - m->nparams];
        size_t len = strlen(base) + 5;
        if ((nm[i] = malloc(len)) == NULL) {
            st = mxkt_error(MXK_ERR_OUT_OF_MEMORY, "out of memory");
            break;
        }
        snprintf(nm[i], len, "%s:%s", arg ? "arg" : "aux", base);
        st = arg ? average_over_ctx(m, m->params, m->nparams, i, &vals[i])
                 : average_over_ctx(m, m->auxs, m->naux, i - m->nparams, &vals[i]);
    }
    if (st != MXK_OK) {
        mxk_ndarray_list_free(n, vals, nm);
        return st;
    }
    *num = n;
    *names = nm;
    *values = vals;
    return MXK_OK;
}

/** The name of state s of a parameter in a .states file. */
static void state_name(char *buf, size_t size, const mxkt_module *m, uint32_t i, uint32_t s) {
    const char *kind = m->opt.kind == MXKT_OPT_ADAM ? (s == 0 ? "mean" : "var") : "mom";
    snprintf(buf, size, "%s:%s", m->pnames[i], kind);
}

/**
 * The checkpoint file of `kind` (mxkt_checkpoint_name) in path[PATH_MAX]. Errors:
 * MXK_ERR_INVALID_ARGUMENT "the checkpoint prefix is empty", "checkpoint prefix
 * of N bytes: the KIND file name does not fit in 4095 bytes" (a name is never
 * cut short: two cut names could be the same file).
 */
static mxk_status ckpt_path(char *path, const char *prefix, int32_t epoch, const char *kind) {
    if (prefix == NULL || prefix[0] == '\0')
        return mxkt_error(MXK_ERR_INVALID_ARGUMENT, "the checkpoint prefix is empty");
    mxkt_checkpoint_name(path, PATH_MAX, prefix, epoch, kind);
    if (strlen(path) >= PATH_MAX - 1)
        return mxkt_error(MXK_ERR_INVALID_ARGUMENT,
                          "checkpoint prefix of %zu bytes: the %s file name does not fit in %d "
                          "bytes",
                          strlen(prefix), kind, PATH_MAX - 1);
    return MXK_OK;
}

/**
 * save_checkpoint(prefix, epoch, save_optimizer_states). Every file is written
 * atomically (mxk.h "Files"), prefix-symbol.json only when it changed, .params
 * before .states: a save that fails or is killed leaves each file as it was or
 * complete, and the previous epoch's files untouched.
 */
mxk_status mxkt_module_save_checkpoint(mxkt_module *m, const char *prefix, int32_t epoch,
                                       int32_t save_states, FILE *log) {
    char path[PATH_MAX];
    MXKT_CHECK(ckpt_path(path, prefix, epoch, "symbol"));
    mxk_status st = mxk_symbol_save(m->sym, path);
    if (st != MXK_OK)
        return mxkt_kernel_error(st, "save_checkpoint");
    MXKT_CHECK(ckpt_path(path, prefix, epoch, "params"));
    uint32_t n = 0;
    mxk_ndarray **arrs = NULL;
    char **names = NULL;
    MXKT_CHECK(mxkt_module_get_params(m, &n, &names, &arrs));
    st = mxk_ndarray_save(path, n, arrs, (const char *const *)names);
    if (st != MXK_OK)
        st = mxkt_kernel_error(st, "save_checkpoint");
    else if (log)
        fprintf(log, "Saved checkpoint to \"%s\"\n", path);
    mxk_ndarray_list_free(n, arrs, names);
    if (st != MXK_OK || !save_states || !m->opt_init)
        return st;
    if (m->update_on_kv) { /* upstream: "Cannot save states for distributed training" */
        if (log)
            fprintf(log, "Optimizer states live on the KVStore servers: not saved\n");
        return MXK_OK;
    }
    /* optimizer states of context 0 (all contexts hold the same) and the counts */
    uint32_t ns = m->nparams * m->nstates + 1;
    arrs = calloc(ns, sizeof *arrs);
    names = calloc(ns, sizeof *names);
    char *buf = calloc(ns, 256);
    mxk_ndarray *counts = NULL;
    mxk_shape cs = {.ndim = 1};
    cs.dims[0] = (int64_t)m->nparams + 1;
    if (!arrs || !names || !buf)
        st = mxkt_error(MXK_ERR_OUT_OF_MEMORY, "out of memory");
    else if ((st = ckpt_path(path, prefix, epoch, "states")) == MXK_OK)
        st = mxk_ndarray_create(&cs, MXK_FLOAT64, (mxk_context){MXK_DEV_CPU, 0}, &counts);
    if (st == MXK_OK) {
        double *cv = NULL;
        mxk_ndarray_data(counts, (void **)&cv);
        cv[0] = (double)m->opt.num_update;
        for (uint32_t i = 0; i < m->nparams; i++)
            cv[i + 1] = (double)m->opt.counts[i];
        uint32_t k = 0;
        for (uint32_t i = 0; i < m->nparams; i++)
            for (uint32_t s = 0; s < m->nstates; s++, k++) {
                names[k] = buf + (size_t)k * 256;
                state_name(names[k], 256, m, i, s);
                arrs[k] = m->states[i * m->nstates + s];
            }
        names[k] = buf + (size_t)k * 256;
        snprintf(names[k], 256, "__counts__");
        arrs[k] = counts;
        st = mxk_ndarray_save(path, ns, arrs, (const char *const *)names);
        if (st != MXK_OK)
            st = mxkt_kernel_error(st, "save_checkpoint");
        else if (log)
            fprintf(log, "Saved optimizer state to \"%s\"\n", path);
    }
    mxk_ndarray_free(counts);
    free(arrs);
    free(names);
    free(buf);
    return st;
}

/** Names listed in a checkpoint mismatch message before "and N more". */
#define MISMATCH_SHOWN 3

/**
 * Appends " (what): a, b, c and N more" for the names of `list` flagged in `flag`
 * (count of them: n) to the stream.
 */
static void list_flagged(FILE *f, const char *what, const char *const *list, const char *prefix,
                         const char *flag, uint32_t total, uint32_t n) {
    fprintf(f, "%s %u %s", prefix, n, what);
    uint32_t shown = 0;
    for (uint32_t i = 0; i < total && shown < MISMATCH_SHOWN; i++)
        if (flag[i])
            fprintf(f, "%s%s", shown++ ? ", " : " ", list[i]);
    if (n > shown)
        fprintf(f, " and %u more", n - shown);
}

/**
 * Checks that the names of a parameter file are exactly the module's parameters
 * and aux states (module_slot), before anything is copied. Error:
 * MXK_ERR_INVALID_ARGUMENT "PATH does not match the network: it has N parameters
 * the network lacks: a, b, c and K more; it lacks M of the network's: x, y".
 */
static mxk_status check_ckpt_names(const mxkt_module *m, const char *path, uint32_t n,
                                   const char *const *names) {
    uint32_t total = m->nparams + m->naux, extra = 0, missing = 0;
    char *given = calloc((size_t)total + 1, 1), *unknown = calloc((size_t)n + 1, 1);
    const char **mine = calloc((size_t)total + 1, sizeof *mine);
    mxk_status st = MXK_OK;
    if (given == NULL || unknown == NULL || mine == NULL)
        st = mxkt_error(MXK_ERR_OUT_OF_MEMORY, "%s: out of memory", path);
    for (uint32_t k = 0; k < n && st == MXK_OK; k++) {
        int64_t slot = module_slot(m, names[k]);
        if (slot >= 0)
            given[slot] = 1;
        else
            extra += unknown[k] = 1;
    }
    for (uint32_t i = 0; i < total && st == MXK_OK; i++) {
        mine[i] = i < m->nparams ? m->pnames[i] : m->aux[i - m->nparams];
        missing += given[i] = !given[i]; /* from here on: flags the missing ones */
    }
    if (st == MXK_OK && (extra || missing)) {
        char *text = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&text, &len);
        if (f != NULL) {
            fprintf(f, "%s does not match the network", path);
            if (extra)
                list_flagged(f, "parameters the network lacks:", names, ": it has", unknown, n,
                             extra);
            if (missing)
                list_flagged(f, "of the network's:", mine, extra ? "; it lacks" : ": it lacks",
                             given, total, missing);
        }
        st = f != NULL && fclose(f) == 0
                 ? mxkt_error(MXK_ERR_INVALID_ARGUMENT, "%s", text)
                 : mxkt_error(MXK_ERR_OUT_OF_MEMORY, "%s: out of memory", path);
        free(text);
    }
    free(given);
    free(unknown);
    free(mine);
    return st;
}

/** Loads prefix-%04d.params into the module (set_params). */
mxk_status mxkt_module_load_params(mxkt_module *m, const char *prefix, int32_t epoch) {
    char path[PATH_MAX];
    MXKT_CHECK(ckpt_path(path, prefix, epoch, "params"));
    uint32_t n = 0;
    mxk_ndarray **arrs = NULL;
    char **names = NULL;
    mxk_status st = mxk_ndarray_load(path, &n, &arrs, &names);
    if (st != MXK_OK)
        return st; /* mxk_ndarray_load's message names the file */
    if (names == NULL)
        st = mxkt_error(MXK_ERR_FORMAT, "%s: a parameter file needs names", path);
    else
        st = check_ckpt_names(m, path, n, (const char *const *)names);
    if (st == MXK_OK)
        st = mxkt_module_set_params(m, n, (const char *const *)names, arrs, 0);
    mxk_ndarray_list_free(n, arrs, names);
    return st;
}

/** Loads prefix-%04d.states into the optimizer (every context). */
mxk_status mxkt_module_load_states(mxkt_module *m, const char *prefix, int32_t epoch) {
    if (!m->opt_init)
        return mxkt_error(MXK_ERR_STATE, "init_optimizer before loading optimizer states");
    char path[PATH_MAX], want[300];
    MXKT_CHECK(ckpt_path(path, prefix, epoch, "states"));
    uint32_t n = 0;
    mxk_ndarray **arrs = NULL;
    char **names = NULL;
    mxk_status st = mxk_ndarray_load(path, &n, &arrs, &names);
    if (st != MXK_OK)
        return st; /* mxk_ndarray_load's message names the file */
    /* check everything first, so that a bad file changes nothing */
    for (uint32_t i = 0; i < m->nparams && st == MXK_OK; i++)
        for (uint32_t s = 0; s < m->nstates && st == MXK_OK; s++) {
            state_name(want, sizeof want, m, i, s);
            int g = names ? find_given(n, (const char *const *)names, want) : -1;
            mxk_shape ws = mxk_ndarray_shape(m->params[i]), gs;
            if (g < 0)
                st = mxkt_error(MXK_ERR_NOT_FOUND, "%s: no state %s", path, want);
            else if (gs = mxk_ndarray_shape(arrs[g]),
                     gs.ndim != ws.ndim || memcmp(gs.dims, ws.dims, sizeof(int64_t) * ws.ndim))
                st = mxkt_error(MXK_ERR_SHAPE, "%s: state %s has another shape than %s", path, want,
                                m->pnames[i]);
        }
    int g = names ? find_given(n, (const char *const *)names, "__counts__") : -1;
    if (st == MXK_OK && (g < 0 || mxk_ndarray_dtype(arrs[g]) != MXK_FLOAT64 ||
                         mxk_ndarray_size(arrs[g]) != (uint64_t)m->nparams + 1))
        st = mxkt_error(MXK_ERR_FORMAT,
                        "%s: __counts__ must be float64 with %u values (num_update, then one "
                        "update count per parameter)",
                        path, m->nparams + 1);
    double cv[MXKT_MAX_PARAMS + 1];
    mxk_status ks = MXK_OK; /* the kernel's status of the copies */
    if (st == MXK_OK)
        ks = mxk_ndarray_copy_to_host(arrs[g], cv, ((uint64_t)m->nparams + 1) * sizeof(double));
    for (uint32_t i = 0; i < m->nparams && st == MXK_OK && ks == MXK_OK; i++)
        for (uint32_t s = 0; s < m->nstates && ks == MXK_OK; s++) {
            state_name(want, sizeof want, m, i, s);
            int k = find_given(n, (const char *const *)names, want);
            for (uint32_t c = 0; c < m->nctx && ks == MXK_OK; c++)
                ks = mxk_ndarray_copy_to(arrs[k], m->states[(c * m->nparams + i) * m->nstates + s]);
        }
    if (st == MXK_OK && ks == MXK_OK)
        ks = mxk_wait_all();
    if (st == MXK_OK && ks != MXK_OK)
        st = mxkt_kernel_error(ks, path);
    if (st == MXK_OK) {
        m->opt.num_update = (int64_t)cv[0];
        for (uint32_t i = 0; i < m->nparams; i++)
            m->opt.counts[i] = (int64_t)cv[i + 1];
        if (m->opt.sched.kind != MXKT_SCHED_NONE) /* replay the scheduler to num_update */
            mxkt_lr_get(&m->opt.sched, m->opt.num_update);
    }
    mxk_ndarray_list_free(n, arrs, names);
    return st;
}

/** Loads prefix-symbol.json. */
mxk_status mxkt_load_symbol(const char *prefix, mxk_symbol **out) {
    char path[PATH_MAX];
    MXKT_CHECK(ckpt_path(path, prefix, 0, "symbol"));
    /* mxk_symbol_load's message starts with the path already */
    return mxk_symbol_load(path, out);
}

/** Host view of a batch's labels (CPU array). */
static mxk_status host_labels(mxk_ndarray *label, const float **out) {
    void *p = NULL;
    if (label == NULL) {
        *out = NULL;
        return MXK_OK;
    }
    mxk_status st = mxk_ndarray_data(label, &p);
    if (st != MXK_OK)
        return mxkt_kernel_error(st, "label");
    *out = p;
    return MXK_OK;
}

/**
 * Output rows (= labels) of a batch's real examples: batch_size - pad examples
 * (DataBatch.pad), times the output rows of one example (1 for a classifier; T for a
 * language model whose (N*T, V) output scores the (N, T) labels, as
 * example/rnn/bucketing/lstm_bucketing.py).
 */
static int64_t real_rows(const mxkt_module *m, uint32_t pad) {
    int64_t per = m->out_rows % m->batch == 0 ? m->out_rows / m->batch : 1;
    return ((int64_t)pad < m->batch ? m->batch - (int64_t)pad : 0) * per;
}

/** 1 when a metric reads labels as class indices into the output row (metric.py's
 * Accuracy, TopKAccuracy, CrossEntropy, NegativeLogLikelihood, Perplexity). */
static int metric_is_class(const mxkt_metric *k) {
    return k->kind == MXKT_METRIC_ACC || k->kind == MXKT_METRIC_TOPK || k->kind == MXKT_METRIC_CE ||
           k->kind == MXKT_METRIC_NLL || k->kind == MXKT_METRIC_PERPLEXITY;
}

/**
 * Refuses a label that is not a class of the output (0 <= label < out_width) when a
 * class metric reads it (Perplexity's ignore_label excepted): upstream's
 * CrossEntropy / NegativeLogLikelihood index past the prediction row (IndexError
 * in python/mxnet/metric.py) and its Accuracy counts the row as wrong, silently.
 * `first` is the epoch position of the batch's row 0; it->source names the data.
 * Outputs of width 1 (the prediction is the class) are not checked.
 */
static mxk_status check_labels(const mxkt_module *m, const mxkt_iter *it,
                               const mxkt_metric *metrics, uint32_t nm, const float *labels,
                               int64_t n, int64_t first) {
    if (m->out_width < 2)
        return MXK_OK;
    for (uint32_t k = 0; k < nm; k++) {
        if (!metric_is_class(&metrics[k]))
            continue;
        for (int64_t i = 0; i < n; i++) {
            float l = labels[i];
            if (metrics[k].kind == MXKT_METRIC_PERPLEXITY && metrics[k].has_ignore &&
                l == (float)metrics[k].ignore_label)
                continue;
            if (!(l >= 0.0f && l < (float)m->out_width))
                return mxkt_error(MXK_ERR_INVALID_ARGUMENT,
                                  "label %g of example %lld%s%s%s is not a class of the output "
                                  "(0 to %lld)",
                                  (double)l, (long long)(first + i), it->source[0] ? " in '" : "",
                                  it->source, it->source[0] ? "'" : "",
                                  (long long)(m->out_width - 1));
        }
    }
    return MXK_OK;
}

/** A metric that counted nothing has no value (EvalMetric.get's NaN): an error naming it. */
static mxk_status check_counted(const mxkt_metric *metrics, uint32_t nm, const char *what) {
    for (uint32_t k = 0; k < nm; k++)
        if (metrics[k].num_inst == 0.0)
            return mxkt_error(MXK_ERR_INVALID_ARGUMENT,
                              "%s: metric '%s' counted no example (the data gave no labelled row)",
                              what, metrics[k].name);
    return MXK_OK;
}

/** Sets the progress callback (see mxk_train.h). */
void mxkt_module_set_progress(mxkt_module *m, mxkt_progress_cb cb, void *user) {
    m->progress_cb = cb;
    m->progress_user = user;
}

/**
 * Reports a pass's progress to the module's callback (none: nothing): batch
 * `batch` of `total` done (0: unknown), `samples` rows in `seconds`, the running
 * value of metrics[0] (NULL: none), `done` after the last batch.
 */
static void report_progress(const mxkt_module *m, const char *phase, int32_t epoch, int64_t batch,
                            int64_t total, int64_t samples, double seconds,
                            const mxkt_metric *metric, int32_t done) {
    if (m->progress_cb == NULL)
        return;
    mxkt_progress p = {.phase = phase,
                       .epoch = epoch,
                       .batch = batch,
                       .num_batches = total,
                       .samples = samples,
                       .seconds = seconds,
                       .metric = metric ? metric->name : NULL,
                       .value = metric && metric->num_inst > 0.0 ? mxkt_metric_get(metric) : NAN,
                       .done = done};
    m->progress_cb(&p, m->progress_user);
}

/** score(eval_data, eval_metric): pad rows excluded (BaseModule.score with batch.pad). */
mxk_status mxkt_module_score(mxkt_module *m, mxkt_iter *eval, mxkt_metric *metrics,
                             uint32_t num_metrics) {
    for (uint32_t k = 0; k < num_metrics; k++)
        mxkt_metric_reset(&metrics[k]);
    m->scored = 0;
    MXKT_CHECK(mxkt_iter_reset(eval));
    const char *phase = m->progress_phase ? m->progress_phase : "score";
    double tic = now_s();
    int64_t nbatch = 0;
    for (int64_t first = 0;;) {
        int32_t has = 0;
        MXKT_CHECK(mxkt_iter_next(eval, &has));
        if (!has)
            break;
        mxk_ndarray *d = NULL, *l = NULL;
        uint32_t pad = 0;
        MXKT_CHECK(eval->batch(eval, &d, &l, &pad));
        MXKT_CHECK(mxkt_module_switch_for(m, eval));
        MXKT_CHECK(mxkt_module_forward(m, d, l, 0));
        const float *lh = NULL;
        MXKT_CHECK(host_labels(l, &lh));
        int64_t n = real_rows(m, pad);
        if (lh)
            MXKT_CHECK(check_labels(m, eval, metrics, num_metrics, lh, n, first));
        if (lh) {
            MXKT_CHECK(mxkt_module_update_metric(m, metrics, num_metrics, lh, n));
            m->scored += n;
        }
        first += n;
        nbatch++;
        report_progress(m, phase, m->progress_epoch, nbatch, eval->num_batches, nbatch * m->batch,
                        now_s() - tic, num_metrics ? &metrics[0] : NULL, 0);
    }
    report_progress(m, phase, m->progress_epoch, nbatch, eval->num_batches, nbatch * m->batch,
                    now_s() - tic, num_metrics ? &metrics[0] : NULL, 1);
    return check_counted(metrics, num_metrics, "score");
}

/** Examples the last score counted. */
int64_t mxkt_module_scored_examples(const mxkt_module *m) {
    return m->scored;
}

/** predict(eval_data): outputs with pad rows dropped, concatenated. */
mxk_status mxkt_module_predict(mxkt_module *m, mxkt_iter *eval, float **out, int64_t *rows,
                               int64_t *width) {
    MXKT_CHECK(mxkt_iter_reset(eval));
    size_t cap = 0, used = 0;
    float *res = NULL;
    double tic = now_s();
    int64_t nbatch = 0;
    for (;;) {
        int32_t has = 0;
        mxk_status st = mxkt_iter_next(eval, &has);
        mxk_ndarray *d = NULL, *l = NULL;
        uint32_t pad = 0;
        if (st == MXK_OK && has)
            st = eval->batch(eval, &d, &l, &pad);
        if (st == MXK_OK && has)
            st = mxkt_module_switch_for(m, eval);
        if (st == MXK_OK && has)
            st = mxkt_module_forward(m, d, NULL, 0);
        int64_t w = 0;
        if (st == MXK_OK && has)
            st = mxkt_module_get_output(m, m->out_host, &w);
        if (st != MXK_OK) {
            free(res);
            return st;
        }
        if (!has)
            break;
        size_t add = (size_t)(real_rows(m, pad) * w);
        if (used + add > cap) {
            cap = (used + add) * 2;
            float *nr = realloc(res, cap * sizeof(float));
            if (nr == NULL) {
                free(res);
                return mxkt_error(MXK_ERR_OUT_OF_MEMORY, "out of memory");
            }
            res = nr;
        }
        memcpy(res + used, m->out_host, add * sizeof(float));
        used += add;
        nbatch++;
        report_progress(m, "predict", -1, nbatch, eval->num_batches, nbatch * m->batch,
                        now_s() - tic, NULL, 0);
    }
    report_progress(m, "predict", -1, nbatch, eval->num_batches, nbatch * m->batch, now_s() - tic,
                    NULL, 1);
    if (used == 0) {
        free(res);
        return mxkt_error(MXK_ERR_INVALID_ARGUMENT, "predict: the data gave no example");
    }
    *out = res;
    *width = m->out_width;
    *rows = (int64_t)used / m->out_width;
    return MXK_OK;
}

/** The learning rate the optimizer's last update used (its scheduler's, else the fixed one). */
static double module_lr(const mxkt_module *m) {
    return m->opt.sched.kind != MXKT_SCHED_NONE ? m->opt.sched.lr : m->opt.lr;
}

/**
 * The trainer's cross-check (MXK_CROSSCHECK=REFERENCE): the first `*left` batches
 * of fit (MXK_CROSSCHECK_ITERATIONS, default 1) check every executor node by node
 * against backend REFERENCE on the real batch and parameters, after forward and
 * backward and before the update (mxk_crosscheck_executor, training mode, with
 * backward). Prints one line per check on `log`; a divergence prints the report and
 * stops training with MXK_ERR_BACKEND "crosscheck: node 'N' (OP) on B differs from
 * R: ...". Does nothing when MXK_CROSSCHECK is unset or empty, or once *left is 0.
 * *left starts at -1 (not read yet). Errors: MXK_ERR_INVALID_ARGUMENT
 * "MXK_CROSSCHECK_ITERATIONS: expected a positive integer, got 'X'", the
 * cross-check's own.
 */
static mxk_status crosscheck_batch(mxkt_module *m, int64_t *left, int64_t batch, FILE *log) {
    const char *ref = getenv("MXK_CROSSCHECK");
    if (*left == 0 || ref == NULL || ref[0] == '\0')
        return MXK_OK;
    if (*left < 0) {
        const char *k = getenv("MXK_CROSSCHECK_ITERATIONS");
        char *end = NULL;
        *left = k && k[0] ? strtoll(k, &end, 10) : 1;
        if (k && k[0] && (*end != '\0' || *left < 1))
            return mxkt_error(MXK_ERR_INVALID_ARGUMENT,
                              "MXK_CROSSCHECK_ITERATIONS: expected a positive integer, got '%s'",
                              k);
    }
    (*left)--;
    for (uint32_t c = 0; c < m->nctx; c++) {
        mxk_crosscheck_options o = {.struct_size = sizeof o,
                                    .reference = ref,
                                    .is_train = 1,
                                    .check_backward = 1,
                                    .seed = (uint64_t)batch};
        mxk_crosscheck_report r;
        mxk_status st = mxk_crosscheck_executor(m->ex[c], &o, &r);
        if (st != MXK_OK)
            return mxkt_kernel_error(st, "crosscheck");
        if (r.diverged)
            return mxkt_error(MXK_ERR_BACKEND,
                              "crosscheck: node '%s' (%s) on %s differs from %s in batch %lld: %s: "
                              "max abs error %.6g, max rel error %.6g (rtol %g, atol %g), worst "
                              "element [%llu]: %.9g against %.9g",
                              r.node, r.op, r.backend, r.reference, (long long)batch, r.result,
                              r.max_abs_err, r.max_rel_err, r.rtol, r.atol,
                              (unsigned long long)r.worst_index, r.value, r.reference_value);
        fprintf(log, "crosscheck: batch %lld: %u nodes agree with %s (%u ran on %s, %u skipped)\n",
                (long long)batch, r.nodes_checked, ref, r.nodes_on_reference, ref, r.nodes_skipped);
    }
    return MXK_OK;
}

/** fit(train_data, eval_data, ...) as BaseModule.fit. */
mxk_status mxkt_module_fit(mxkt_module *m, mxkt_iter *train, mxkt_iter *eval, mxkt_fit_options *o) {
    FILE *log = o->log ? o->log : stderr;
    mxkt_metric metrics[MXKT_FIT_MAX_METRICS], vmetrics[MXKT_FIT_MAX_METRICS];
    uint32_t nm = o->metrics ? o->num_metrics : 1;
    if (nm < 1 || nm > MXKT_FIT_MAX_METRICS)
        return mxkt_error(MXK_ERR_INVALID_ARGUMENT, "fit: 1 to %d metrics, not %u",
                          MXKT_FIT_MAX_METRICS, nm);
    if (o->metrics)
        memcpy(metrics, o->metrics, nm * sizeof *metrics);
    else
        mxkt_metric_create("acc", 0, &metrics[0]);
    memcpy(vmetrics, metrics, nm * sizeof *metrics);
    int64_t total = train->num_batches;
    int64_t crosscheck_left = -1, batches_seen = 0;
    for (int32_t epoch = o->begin_epoch; epoch < o->num_epoch; epoch++) {
        double tic = now_s(), spd_tic = tic, train_time = 0.0;
        for (uint32_t k = 0; k < nm; k++)
            mxkt_metric_reset(&metrics[k]);
        int64_t nbatch = 0, samples = 0, examples = 0;
        for (;;) {
            int32_t has = 0;
            MXKT_CHECK(mxkt_iter_next(train, &has));
            if (!has)
                break;
            mxk_ndarray *d = NULL, *l = NULL;
            uint32_t pad = 0;
            MXKT_CHECK(train->batch(train, &d, &l, &pad));
            MXKT_CHECK(mxkt_module_switch_for(m, train));
            /* all batch_size rows take part in the update, the pad rows too (as upstream) */
            MXKT_CHECK(mxkt_module_forward_backward(m, d, l));
            MXKT_CHECK(crosscheck_batch(m, &crosscheck_left, ++batches_seen, log));
            /* the labels are read while the passes run; a bad one stops before the update */
            const float *lh = NULL;
            MXKT_CHECK(host_labels(l, &lh));
            int64_t n = real_rows(m, pad);
            if (lh)
                MXKT_CHECK(check_labels(m, train, metrics, nm, lh, n, examples));
            double lr_before = module_lr(m);
            MXKT_CHECK(mxkt_module_update(m));
            if (module_lr(m) != lr_before)
                fprintf(log, "Update[%lld]: Change learning rate to %0.5e\n",
                        (long long)m->opt.num_update, module_lr(m));
            if (lh)
                MXKT_CHECK(mxkt_module_update_metric(m, metrics, nm, lh, n));
            examples += n;
            samples += m->batch;
            /* Speedometer(batch_size, frequent=disp_batches) */
            if (o->disp_batches > 0) {
                if (nbatch == 0) {
                    spd_tic = now_s();
                } else if (nbatch % o->disp_batches == 0) {
                    double t = now_s();
                    char line[1024];
                    mxkt_speedometer_line(
                        line, sizeof line, epoch, nbatch,
                        (double)o->disp_batches * (double)m->batch / (t - spd_tic), metrics, nm);
                    fprintf(log, "%s\n", line);
                    fflush(log);
                    spd_tic = t;
                }
            }
            if (o->batch_cb)
                o->batch_cb(epoch, nbatch, metrics, nm, o->batch_cb_user);
            nbatch++;
            report_progress(m, "train", epoch, nbatch, total, samples, now_s() - tic, &metrics[0],
                            0);
        }
        mxk_status waited = mxk_wait_all();
        if (waited != MXK_OK)
            return mxkt_kernel_error(waited, "fit");
        train_time = now_s() - tic;
        report_progress(m, "train", epoch, nbatch, total, samples, train_time, &metrics[0], 1);
        total = nbatch;
        char what[64];
        snprintf(what, sizeof what, "fit: epoch %d", epoch);
        MXKT_CHECK(check_counted(metrics, nm, what));
        o->last_examples = examples;
        for (uint32_t k = 0; k < nm; k++) {
            o->last_train[k] = mxkt_metric_get(&metrics[k]);
            fprintf(log, "Epoch[%d] Train-%s=%f\n", epoch, metrics[k].name, o->last_train[k]);
        }
        fprintf(log, "Epoch[%d] Time cost=%.3f\n", epoch, train_time);
        fflush(log);
        o->last_speed = (double)samples / train_time;
        o->last_seconds = train_time;
        if (o->ckpt_prefix) {
            int32_t period = o->ckpt_period > 0 ? o->ckpt_period : 1;
            if ((epoch + 1) % period == 0)
                MXKT_CHECK(mxkt_module_save_checkpoint(m, o->ckpt_prefix, epoch + 1, 1, log));
        }
        if (eval) {
            m->progress_phase = "validation";
            m->progress_epoch = epoch;
            mxk_status scored = mxkt_module_score(m, eval, vmetrics, nm);
            m->progress_phase = NULL;
            m->progress_epoch = -1;
            MXKT_CHECK(scored);
            o->last_val_examples = m->scored;
            for (uint32_t k = 0; k < nm; k++) {
                o->last_val[k] = mxkt_metric_get(&vmetrics[k]);
                fprintf(log, "Epoch[%d] Validation-%s=%f\n", epoch, vmetrics[k].name,
                        o->last_val[k]);
            }
            fflush(log);
        }
        /* end of the epoch: the iterator starts the next one (upstream resets here) */
        MXKT_CHECK(mxkt_iter_reset(train));
        o->last_lr = module_lr(m);
        if (o->metrics_log || o->epoch_cb) {
            char *line = mxkt_epoch_json(o, epoch, metrics, eval ? vmetrics : NULL, nm);
            if (line == NULL)
                return mxkt_error(MXK_ERR_OUT_OF_MEMORY, "fit: out of memory");
            mxk_status logged =
                o->metrics_log ? mxkt_metrics_log_append(o->metrics_log, line) : MXK_OK;
            if (logged == MXK_OK && o->epoch_cb)
                o->epoch_cb(epoch, line, o, o->epoch_cb_user);
            free(line);
            MXKT_CHECK(logged);
        }
    }
    return MXK_OK;
}
