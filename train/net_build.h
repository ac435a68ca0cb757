/*
 * Graph builder of the model-zoo networks (net_*.c): operator nodes applied to
 * symbols with attributes given printf-style, upstream's node names, automatic
 * names counted per network, and the first error kept so that a builder reads as
 * straight-line code like upstream's symbol files
 * (example/image-classification/symbols/).
 */
#ifndef MXK_TRAIN_NET_BUILD_H
#define MXK_TRAIN_NET_BUILD_H

#include "train_internal.h"

/** Most distinct automatic-name hints of one network. */
#define NB_MAX_HINTS 16

/**
 * A network under construction. Every symbol it returns is owned by it (freed
 * by nb_finish); after the first failure every call returns NULL and does
 * nothing, and nb_finish reports that failure. Zero-fill, then use.
 */
typedef struct nb {
    mxk_symbol **syms; /**< every handle made, freed by nb_finish */
    uint32_t num_syms, cap_syms;
    mxk_status st;                 /**< first failure (MXK_OK: none) */
    char hints[NB_MAX_HINTS][24];  /**< automatic-name hints seen */
    uint32_t counts[NB_MAX_HINTS]; /**< next number of each hint */
    uint32_t num_hints;
} nb;

/** The variable `name` (MXNet's mx.sym.Variable). */
mxk_symbol *nb_var(nb *b, const char *name);

/**
 * Applies `op` to the `n` positional inputs `in`, with attributes written by
 * the printf format `fmt` as "key=value;key=value" (values hold no ';'). The key
 * "name" gives the node's name; without it the node gets MXNet's automatic name
 * (python/mxnet/name.py NameManager: the lower-cased operator name and a counter
 * of this network, "pooling0"). Returns NULL after a failure (recorded as
 * "NODE: <kernel's message>").
 */
mxk_symbol *nb_op(nb *b, const char *op, mxk_symbol *const *in, uint32_t n, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

/** A handle of output `i` of `s` (MXNet's s[i]), kept by the builder; NULL after a failure. */
mxk_symbol *nb_output(nb *b, mxk_symbol *s, uint32_t i);

/** Writes MXNet's automatic name of `hint` (hint + its counter, "split0") into buf. */
void nb_auto_name(nb *b, const char *hint, char *buf, size_t size);

/** lhs + rhs as upstream's Symbol.__add__: elemwise_add named "_plusN". */
mxk_symbol *nb_plus(nb *b, mxk_symbol *lhs, mxk_symbol *rhs);

/**
 * Ends the build: on success *out is a new handle of `result` (the caller frees
 * it); every handle of the builder is freed either way. Returns the first
 * failure's status (message in mxkt_last_error).
 */
mxk_status nb_finish(nb *b, mxk_symbol *result, mxk_symbol **out);

/** Frees every handle of the builder and zeroes it (the builder's status is dropped). */
void nb_discard(nb *b);

/** Records a failure of the network's configuration (MXK_ERR_INVALID_ARGUMENT). */
void nb_fail(nb *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Builders of the families (net_*.c); `c` is checked by mxkt_net_create. */
mxk_symbol *nb_resnet(nb *b, const mxkt_net_config *c);
mxk_symbol *nb_resnext(nb *b, const mxkt_net_config *c);
mxk_symbol *nb_vgg(nb *b, const mxkt_net_config *c);
mxk_symbol *nb_alexnet(nb *b, const mxkt_net_config *c);
mxk_symbol *nb_googlenet(nb *b, const mxkt_net_config *c);
mxk_symbol *nb_inception_bn(nb *b, const mxkt_net_config *c);
mxk_symbol *nb_inception_v3(nb *b, const mxkt_net_config *c);
mxk_symbol *nb_mobilenet(nb *b, const mxkt_net_config *c);
mxk_symbol *nb_mobilenetv2(nb *b, const mxkt_net_config *c);

#endif
