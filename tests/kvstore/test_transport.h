/*
 * The call log of the test transport plugin (test_transport_plugin.c, built as
 * libtkv-mem.so), shared by the plugin and test_kvstore.c. The test reads it
 * through the exported tkv_* functions, found with dlsym in the loaded plugin.
 */
#ifndef MXK_TEST_TRANSPORT_H
#define MXK_TEST_TRANSPORT_H

#include <stdint.h>

#include "mxk_abi_base.h"

/** Name of the transport (and store type) the plugin registers. */
#define TKV_TRANSPORT "test_mem"

/** One transport callback the kernel made. */
typedef struct tkv_call {
    char op[16]; /**< "create", "destroy", "rank", "num_workers", "init", "push", "pull", "barrier"
                  */
    int32_t instance; /**< which transport object (1, 2, ... in creation order) */
    char key[32];     /**< init/push/pull: the key as the kernel passed it */
    int32_t dtype, dev_type, priority;
    mxk_shape shape;
    uint64_t bytes;
    uint32_t num_values; /**< values saved below (at most 8) */
    float values[8];     /**< init/push: the input's first values; pull: the values written */
} tkv_call;

/** Number of logged calls. */
uint32_t tkv_log_count(void);
/** Copy of logged call i (0-based); 0 if out of range. */
int tkv_log_get(uint32_t i, tkv_call *out);
/** Clears the log. */
void tkv_log_reset(void);

typedef uint32_t (*tkv_log_count_fn)(void);
typedef int (*tkv_log_get_fn)(uint32_t i, tkv_call *out);
typedef void (*tkv_log_reset_fn)(void);

#endif /* MXK_TEST_TRANSPORT_H */
