/*
 * Kernel-internal device checks shared by the storage and resource managers:
 * MXNet-style context names and the validated lookup of a device backend.
 */
#ifndef MXK_KERNEL_DEVICE_LOOKUP_H
#define MXK_KERNEL_DEVICE_LOOKUP_H

#include <stddef.h>

#include "mxk.h"
#include "mxk_abi_device.h"

/**
 * Formats ctx as MXNet prints it ("gpu(1)"; "device type 9(0)" for an unknown
 * type) into buf (NUL-terminated, truncated to n bytes). Returns buf.
 */
const char *mxki_ctx_format(mxk_context ctx, char *buf, size_t n);

/**
 * Looks up the backend of ctx.dev_type (mxki_registry_device) and checks ctx.dev_id
 * against its device count. Returns the backend, or NULL with the last error set to
 * MXK_ERR_NOT_FOUND and a message prefixed by `who` ("storage", "resource"):
 * "<who>: no device backend is registered for device type 2 (gpu)" ("(unknown
 * device type)" for a code that is none) or
 * "<who>: device gpu(3) does not exist: the gpu backend has 2 device(s)".
 */
const mxk_device_def *mxki_device_lookup(const char *who, mxk_context ctx);

#endif /* MXK_KERNEL_DEVICE_LOOKUP_H */
