/*
 * The host services table handed to plugins (kernel-internal side).
 */
#ifndef MXK_HOST_API_H
#define MXK_HOST_API_H

#include "mxk_abi_host.h"
#include "resource.h"

/** The process-wide host table (static; valid until exit). */
const mxk_host_api *mxki_host_api_table(void);

/**
 * The kernel's extension of an mxk_op_ctx: the public part first, so the host's
 * temp_space can find the slot of the ctx a kernel passes back.
 */
typedef struct mxk_op_call_ctx {
    mxk_op_ctx pub;
    mxk_resource_slot *temp_slot; /**< first temp-space slot of the call, or NULL */
} mxk_op_call_ctx;

/** Sets the calling thread's current stream for host->current_stream (engine workers). */
void mxki_host_set_current_stream(int32_t dev_type, int32_t dev_id, void *stream);

#endif /* MXK_HOST_API_H */
