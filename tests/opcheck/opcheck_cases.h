/*
 * The operator case tables of the operator test kit's tests (tests/opcheck): one
 * entry per operator (and its MXNet aliases) with attribute/shape cases, input
 * specs, in-place pairs, flags and float64 references. Shared by test_opcheck.c
 * (the kit over cpu-blas and other CPU backends) and tests/gpu/test_gpu_ops.c
 * (every GPU kernel against cpu-blas's on the same inputs).
 *
 * Table conventions: `names` lists the operator names sharing a configuration
 * (MXNet aliases); a case gives attributes "k=v;k=v" and shapes "d,d|d,d" (one per
 * argument, "0" left to inference, "" no arguments); `inputs` gives per-argument
 * specs "IDX=LOW,HIGH[,int][,nograd]" separated by spaces; `inplace` pairs "IN:OUT".
 */
#ifndef MXK_OPCHECK_CASES_H
#define MXK_OPCHECK_CASES_H

#include <stddef.h>
#include <stdint.h>

#include "mxk_opcheck.h"

/** Most arguments of a case. */
#define MAX_IN 16

/** Most attribute/shape combinations of one operator. */
#define MAX_CASES 10

/** One attribute/shape combination. */
typedef struct op_case {
    const char *attrs;  /**< "k=v;k=v" */
    const char *shapes; /**< "d,d|d,d" ("a-b": random dim in [a, b]) */
    uint32_t flags;     /**< extra MXK_OPCHECK_* flags */
} op_case;

/** The configuration of one operator (and its aliases). */
typedef struct op_entry {
    const char *names;  /**< space-separated names */
    const char *inputs; /**< per-argument specs, or NULL */
    const char *inplace;
    uint32_t flags;
    double kink; /**< kink margin of every input (relu, abs, max, ...) */
    mxk_opcheck_forward_fn ref;
    mxk_opcheck_loss_fn loss;
    op_case cases[MAX_CASES];
} op_entry;

/** A case made concrete: attributes and shapes parsed. */
typedef struct concrete {
    char attr_text[256], shape_text[256];
    uint32_t num_attrs;
    const char *keys[16], *vals[16];
    uint32_t num_in;
    mxk_shape shapes[MAX_IN];
    mxk_opcheck_input_spec specs[MAX_IN];
    uint32_t inplace[2 * MAX_IN];
    uint32_t num_inplace;
} concrete;

/** The table (the entries of opcheck_cases.c and the opcheck_*.inc fragments). */
extern const op_entry opcheck_table[];
/** Number of entries of opcheck_table. */
extern const size_t opcheck_table_size;

/** The entry whose names contain `name` (whole word), or NULL. */
const op_entry *opcheck_find_entry(const char *name);

/** The user pointer of an entry's callbacks for operator `name`. */
void *opcheck_user_of(const op_entry *e, const char *name);

/** splitmix64: the next value of the stream *s (random dims of the cases). */
uint64_t opcheck_rnd(uint64_t *s);

/**
 * Makes case `c` of entry `e` concrete into *k: "a-b" ranges drawn from *rng,
 * attributes and shapes parsed, input specs and in-place pairs filled. Returns 0
 * on a malformed table entry.
 */
int opcheck_make_concrete(const op_entry *e, const op_case *c, uint64_t *rng, concrete *k);

#endif /* MXK_OPCHECK_CASES_H */
