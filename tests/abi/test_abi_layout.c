/*
 * Pins the layout of every struct of plugin ABI 1.x on LP64 targets (x86-64,
 * AArch64): sizes and the offset of every field. A change here breaks every
 * plugin built for an older minor; a minor may only append fields at the end of
 * a struct (which changes its size assertion and nothing else: then add the new
 * fields' offsets here, marked with their minor, and keep the old ones). The
 * offset of a minor's first appended field is the struct's size in the minors
 * before it, so the older layouts stay pinned too. Checked at compile time
 * (_Static_assert) and reported at run time.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "mxk_philox.h"
#include "mxk_plugin.h"
#include "testing.h"

#if UINTPTR_MAX != 0xffffffffffffffffu
#error "the pinned ABI 1.x layout is for LP64 targets"
#endif

#define PIN_SIZE(T, n) _Static_assert(sizeof(T) == (n), "ABI size of " #T)
#define PIN_OFF(T, f, n) _Static_assert(offsetof(T, f) == (n), "ABI offset of " #T "." #f)

PIN_SIZE(mxk_shape, 72);
PIN_OFF(mxk_shape, ndim, 0);
PIN_OFF(mxk_shape, reserved_, 4);
PIN_OFF(mxk_shape, dims, 8);
PIN_SIZE(mxk_attr_def, 48);
PIN_OFF(mxk_attr_def, struct_size, 0);
PIN_OFF(mxk_attr_def, abi_minor, 4);
PIN_OFF(mxk_attr_def, name, 8);
PIN_OFF(mxk_attr_def, type, 16);
PIN_OFF(mxk_attr_def, required, 20);
PIN_OFF(mxk_attr_def, default_value, 24);
PIN_OFF(mxk_attr_def, enum_values, 32);
PIN_OFF(mxk_attr_def, doc, 40);
PIN_SIZE(mxk_resource_request, 16);
PIN_OFF(mxk_resource_request, struct_size, 0);
PIN_OFF(mxk_resource_request, type, 4);
PIN_OFF(mxk_resource_request, temp_bytes, 8);
PIN_SIZE(mxk_resource, 32);
PIN_OFF(mxk_resource, struct_size, 0);
PIN_OFF(mxk_resource, type, 4);
PIN_OFF(mxk_resource, ptr, 8);
PIN_OFF(mxk_resource, bytes, 16);
PIN_OFF(mxk_resource, random, 24);
PIN_SIZE(mxk_inplace_pair, 16);
PIN_OFF(mxk_inplace_pair, in_index, 0);
PIN_OFF(mxk_inplace_pair, out_index, 4);
PIN_OFF(mxk_inplace_pair, identity, 8);
PIN_OFF(mxk_inplace_pair, reserved_, 12);
PIN_SIZE(mxk_tensor, 104);
PIN_OFF(mxk_tensor, struct_size, 0);
PIN_OFF(mxk_tensor, dtype, 4);
PIN_OFF(mxk_tensor, data, 8);
PIN_OFF(mxk_tensor, shape, 16);
PIN_OFF(mxk_tensor, dev_type, 88);
PIN_OFF(mxk_tensor, dev_id, 92);
PIN_OFF(mxk_tensor, version, 96); /* ABI 1.2 */
PIN_SIZE(mxk_op_ctx, 56);
PIN_OFF(mxk_op_ctx, struct_size, 0);
PIN_OFF(mxk_op_ctx, dev_type, 4);
PIN_OFF(mxk_op_ctx, dev_id, 8);
PIN_OFF(mxk_op_ctx, is_train, 12);
PIN_OFF(mxk_op_ctx, need_grad, 16);
PIN_OFF(mxk_op_ctx, num_resources, 20);
PIN_OFF(mxk_op_ctx, resources, 24);
PIN_OFF(mxk_op_ctx, stream, 32);
PIN_OFF(mxk_op_ctx, async, 40);
PIN_OFF(mxk_op_ctx, num_threads, 48);
PIN_SIZE(mxk_forward_args, 56);
PIN_OFF(mxk_forward_args, struct_size, 0);
PIN_OFF(mxk_forward_args, num_in, 4);
PIN_OFF(mxk_forward_args, in_data, 8);
PIN_OFF(mxk_forward_args, num_out, 16);
PIN_OFF(mxk_forward_args, out_data, 24);
PIN_OFF(mxk_forward_args, req, 32);
PIN_OFF(mxk_forward_args, num_aux, 40);
PIN_OFF(mxk_forward_args, aux, 48);
PIN_SIZE(mxk_backward_args, 80);
PIN_OFF(mxk_backward_args, struct_size, 0);
PIN_OFF(mxk_backward_args, num_out_grad, 4);
PIN_OFF(mxk_backward_args, out_grad, 8);
PIN_OFF(mxk_backward_args, num_in, 16);
PIN_OFF(mxk_backward_args, in_data, 24);
PIN_OFF(mxk_backward_args, num_out, 32);
PIN_OFF(mxk_backward_args, out_data, 40);
PIN_OFF(mxk_backward_args, in_grad, 48);
PIN_OFF(mxk_backward_args, req, 56);
PIN_OFF(mxk_backward_args, num_aux, 64);
PIN_OFF(mxk_backward_args, aux, 72);
PIN_SIZE(mxk_op_def, 200);
PIN_OFF(mxk_op_def, struct_size, 0);
PIN_OFF(mxk_op_def, abi_minor, 4);
PIN_OFF(mxk_op_def, name, 8);
PIN_OFF(mxk_op_def, description, 16);
PIN_OFF(mxk_op_def, attrs, 24);
PIN_OFF(mxk_op_def, num_attrs, 32);
PIN_OFF(mxk_op_def, arguments, 40);
PIN_OFF(mxk_op_def, outputs, 48);
PIN_OFF(mxk_op_def, aux_states, 56);
PIN_OFF(mxk_op_def, parse_param, 64);
PIN_OFF(mxk_op_def, free_param, 72);
PIN_OFF(mxk_op_def, list_arguments, 80);
PIN_OFF(mxk_op_def, list_outputs, 88);
PIN_OFF(mxk_op_def, list_aux_states, 96);
PIN_OFF(mxk_op_def, num_visible_outputs, 104);
PIN_OFF(mxk_op_def, infer_shape, 112);
PIN_OFF(mxk_op_def, infer_type, 120);
PIN_OFF(mxk_op_def, backward_dependency, 128);
PIN_OFF(mxk_op_def, forward_resources, 136);
PIN_OFF(mxk_op_def, backward_resources, 144);
PIN_OFF(mxk_op_def, forward_inplace, 152);
PIN_OFF(mxk_op_def, backward_inplace, 160);
PIN_OFF(mxk_op_def, mutate_inputs, 168);
PIN_OFF(mxk_op_def, no_gradient, 176);
PIN_OFF(mxk_op_def, aliases, 184);         /* ABI 1.1 */
PIN_OFF(mxk_op_def, input_var_attrs, 192); /* ABI 1.3 */
PIN_SIZE(mxk_op_kernel_def, 112);
PIN_OFF(mxk_op_kernel_def, struct_size, 0);
PIN_OFF(mxk_op_kernel_def, abi_minor, 4);
PIN_OFF(mxk_op_kernel_def, op_name, 8);
PIN_OFF(mxk_op_kernel_def, dev_type, 16);
PIN_OFF(mxk_op_kernel_def, backend, 24);
PIN_OFF(mxk_op_kernel_def, priority, 32);
PIN_OFF(mxk_op_kernel_def, flags, 36);
PIN_OFF(mxk_op_kernel_def, supports, 40);
PIN_OFF(mxk_op_kernel_def, create_state, 48);
PIN_OFF(mxk_op_kernel_def, destroy_state, 56);
PIN_OFF(mxk_op_kernel_def, forward, 64);
PIN_OFF(mxk_op_kernel_def, backward, 72);
PIN_OFF(mxk_op_kernel_def, parse_param, 80); /* ABI 1.2 */
PIN_OFF(mxk_op_kernel_def, free_param, 88);
PIN_OFF(mxk_op_kernel_def, crosscheck_rtol, 96);
PIN_OFF(mxk_op_kernel_def, crosscheck_atol, 104);
PIN_SIZE(mxk_device_props, 168);
PIN_OFF(mxk_device_props, struct_size, 0);
PIN_OFF(mxk_device_props, name, 4);
PIN_OFF(mxk_device_props, total_memory, 136);
PIN_OFF(mxk_device_props, free_memory, 144);
PIN_OFF(mxk_device_props, alignment, 152);
PIN_OFF(mxk_device_props, compute_major, 156);
PIN_OFF(mxk_device_props, compute_minor, 160);
PIN_SIZE(mxk_device_def, 120);
PIN_OFF(mxk_device_def, struct_size, 0);
PIN_OFF(mxk_device_def, abi_minor, 4);
PIN_OFF(mxk_device_def, dev_type, 8);
PIN_OFF(mxk_device_def, name, 16);
PIN_OFF(mxk_device_def, device_count, 24);
PIN_OFF(mxk_device_def, get_properties, 32);
PIN_OFF(mxk_device_def, alloc, 40);
PIN_OFF(mxk_device_def, free, 48);
PIN_OFF(mxk_device_def, copy, 56);
PIN_OFF(mxk_device_def, fill, 64);
PIN_OFF(mxk_device_def, stream_create, 72);
PIN_OFF(mxk_device_def, stream_destroy, 80);
PIN_OFF(mxk_device_def, synchronize, 88);
PIN_OFF(mxk_device_def, host_alloc, 96); /* ABI 1.4 */
PIN_OFF(mxk_device_def, host_free, 104);
PIN_OFF(mxk_device_def, reduce, 112);
PIN_SIZE(mxk_iter_batch, 64);
PIN_OFF(mxk_iter_batch, struct_size, 0);
PIN_OFF(mxk_iter_batch, num_data, 4);
PIN_OFF(mxk_iter_batch, data_names, 8);
PIN_OFF(mxk_iter_batch, data, 16);
PIN_OFF(mxk_iter_batch, num_label, 24);
PIN_OFF(mxk_iter_batch, label_names, 32);
PIN_OFF(mxk_iter_batch, label, 40);
PIN_OFF(mxk_iter_batch, pad, 48);
PIN_OFF(mxk_iter_batch, num_index, 52);
PIN_OFF(mxk_iter_batch, index, 56);
PIN_SIZE(mxk_iter_def, 88);
PIN_OFF(mxk_iter_def, struct_size, 0);
PIN_OFF(mxk_iter_def, abi_minor, 4);
PIN_OFF(mxk_iter_def, name, 8);
PIN_OFF(mxk_iter_def, description, 16);
PIN_OFF(mxk_iter_def, attrs, 24);
PIN_OFF(mxk_iter_def, num_attrs, 32);
PIN_OFF(mxk_iter_def, create, 40);
PIN_OFF(mxk_iter_def, destroy, 48);
PIN_OFF(mxk_iter_def, reset, 56);
PIN_OFF(mxk_iter_def, next, 64);
PIN_OFF(mxk_iter_def, current, 72);
PIN_OFF(mxk_iter_def, describe, 80);
PIN_SIZE(mxk_kvstore_transport_def, 136);
PIN_OFF(mxk_kvstore_transport_def, struct_size, 0);
PIN_OFF(mxk_kvstore_transport_def, abi_minor, 4);
PIN_OFF(mxk_kvstore_transport_def, name, 8);
PIN_OFF(mxk_kvstore_transport_def, description, 16);
PIN_OFF(mxk_kvstore_transport_def, attrs, 24);
PIN_OFF(mxk_kvstore_transport_def, num_attrs, 32);
PIN_OFF(mxk_kvstore_transport_def, create, 40);
PIN_OFF(mxk_kvstore_transport_def, destroy, 48);
PIN_OFF(mxk_kvstore_transport_def, rank, 56);
PIN_OFF(mxk_kvstore_transport_def, num_workers, 64);
PIN_OFF(mxk_kvstore_transport_def, init, 72);
PIN_OFF(mxk_kvstore_transport_def, push, 80);
PIN_OFF(mxk_kvstore_transport_def, pull, 88);
PIN_OFF(mxk_kvstore_transport_def, barrier, 96);
PIN_OFF(mxk_kvstore_transport_def, is_server, 104); /* ABI 1.5 */
PIN_OFF(mxk_kvstore_transport_def, send_command, 112);
PIN_OFF(mxk_kvstore_transport_def, run_server, 120);
PIN_OFF(mxk_kvstore_transport_def, set_gradient_compression, 128);
PIN_SIZE(mxk_kvstore_server_handler, 40);
PIN_OFF(mxk_kvstore_server_handler, user, 0);
PIN_OFF(mxk_kvstore_server_handler, command, 8);
PIN_OFF(mxk_kvstore_server_handler, init, 16);
PIN_OFF(mxk_kvstore_server_handler, push, 24);
PIN_OFF(mxk_kvstore_server_handler, pull, 32);
PIN_SIZE(mxk_host_api, 192);
PIN_OFF(mxk_host_api, struct_size, 0);
PIN_OFF(mxk_host_api, abi_minor, 4);
PIN_OFF(mxk_host_api, error, 8);
PIN_OFF(mxk_host_api, log, 16);
PIN_OFF(mxk_host_api, attr_get, 24);
PIN_OFF(mxk_host_api, attr_get_int, 32);
PIN_OFF(mxk_host_api, attr_get_float, 40);
PIN_OFF(mxk_host_api, attr_get_bool, 48);
PIN_OFF(mxk_host_api, attr_get_shape, 56);
PIN_OFF(mxk_host_api, attr_count, 64);
PIN_OFF(mxk_host_api, attr_key, 72);
PIN_OFF(mxk_host_api, attr_value, 80);
PIN_OFF(mxk_host_api, name_list_add, 88);
PIN_OFF(mxk_host_api, storage_alloc, 96);
PIN_OFF(mxk_host_api, storage_free, 104);
PIN_OFF(mxk_host_api, temp_space, 112);
PIN_OFF(mxk_host_api, random_uniform, 120);
PIN_OFF(mxk_host_api, random_normal, 128);
PIN_OFF(mxk_host_api, random_reserve, 136);
PIN_OFF(mxk_host_api, current_stream, 144);
PIN_OFF(mxk_host_api, engine_new_var, 152);
PIN_OFF(mxk_host_api, engine_delete_var, 160);
PIN_OFF(mxk_host_api, engine_push, 168);
PIN_OFF(mxk_host_api, engine_wait_var, 176);
PIN_OFF(mxk_host_api, async_complete, 184);
PIN_SIZE(mxk_registrar, 56);
PIN_OFF(mxk_registrar, struct_size, 0);
PIN_OFF(mxk_registrar, impl, 8);
PIN_OFF(mxk_registrar, register_op, 16);
PIN_OFF(mxk_registrar, register_kernel, 24);
PIN_OFF(mxk_registrar, register_device, 32);
PIN_OFF(mxk_registrar, register_iterator, 40);
PIN_OFF(mxk_registrar, register_kvstore_transport, 48);
PIN_SIZE(mxk_plugin_info, 48);
PIN_OFF(mxk_plugin_info, struct_size, 0);
PIN_OFF(mxk_plugin_info, abi_major, 4);
PIN_OFF(mxk_plugin_info, abi_minor, 8);
PIN_OFF(mxk_plugin_info, min_host_minor, 12);
PIN_OFF(mxk_plugin_info, name, 16);
PIN_OFF(mxk_plugin_info, version, 24);
PIN_OFF(mxk_plugin_info, description, 32);
PIN_OFF(mxk_plugin_info, provides, 40);
PIN_SIZE(mxk_plugin_init_args, 40);
PIN_OFF(mxk_plugin_init_args, struct_size, 0);
PIN_OFF(mxk_plugin_init_args, negotiated_minor, 4);
PIN_OFF(mxk_plugin_init_args, host, 8);
PIN_OFF(mxk_plugin_init_args, registrar, 16);
PIN_OFF(mxk_plugin_init_args, plugin_path, 24);
PIN_OFF(mxk_plugin_init_args, options, 32);

/* The numeric values of the enums that cross the boundary are part of the ABI too. */
_Static_assert(MXK_ABI_MAJOR == 1, "this file pins ABI 1.x");
/* The newest minor pinned here: a new minor pins its appended fields, then bumps this. */
_Static_assert(MXK_ABI_MINOR == 5, "this file pins the layouts up to ABI 1.5");
_Static_assert(MXK_FLOAT32 == 0 && MXK_FLOAT64 == 1 && MXK_FLOAT16 == 2 && MXK_UINT8 == 3 &&
                   MXK_INT32 == 4 && MXK_INT8 == 5 && MXK_INT64 == 6,
               "dtype codes are MXNet's");
_Static_assert(MXK_DEV_CPU == 1 && MXK_DEV_GPU == 2 && MXK_DEV_CPU_PINNED == 3,
               "device codes are MXNet's");
_Static_assert(MXK_REQ_NULL == 0 && MXK_REQ_WRITE == 1 && MXK_REQ_INPLACE == 2 && MXK_REQ_ADD == 3,
               "OpReqType values are MXNet's");
_Static_assert(MXK_OK == 0 && MXK_ERR_INTERNAL == 13, "status codes");
_Static_assert(MXK_MAX_NDIM == 8 && MXK_MAX_RESOURCES == 4 && MXK_MAX_INPLACE == 16, "limits");

static void test_layout_pinned(void) {
    /* The assertions above are the test; this reports the struct count at run time. */
    printf("ABI %d.%d: sizes and offsets of 21 structs pinned\n", MXK_ABI_MAJOR, MXK_ABI_MINOR);
    CHECK(sizeof(mxk_shape) == 72);
}

/* Random123's known-answer vectors for Philox-4x32-10 (kat_vectors). */
static void test_philox_known_answers(void) {
    mxk_philox_block c0 = {{0, 0, 0, 0}};
    mxk_philox_block r = mxk_philox4x32_10(c0, 0);
    CHECK(r.v[0] == 0x6627e8d5u && r.v[1] == 0xe169c58du && r.v[2] == 0xbc57ac4cu &&
          r.v[3] == 0x9b00dbd8u);
    mxk_philox_block c1 = {{0xffffffffu, 0xffffffffu, 0xffffffffu, 0xffffffffu}};
    r = mxk_philox4x32_10(c1, 0xffffffffffffffffull);
    CHECK(r.v[0] == 0x408f276du && r.v[1] == 0x41c83b0eu && r.v[2] == 0xa20bc7c6u &&
          r.v[3] == 0x6d5451fdu);
    mxk_philox_block c2 = {{0x243f6a88u, 0x85a308d3u, 0x13198a2eu, 0x03707344u}};
    r = mxk_philox4x32_10(c2, 0x299f31d0a4093822ull);
    CHECK(r.v[0] == 0xd16cfe09u && r.v[1] == 0x94fdccebu && r.v[2] == 0x5001e420u &&
          r.v[3] == 0x24126ea1u);
}

int main(void) {
    MXK_RUN(test_layout_pinned);
    MXK_RUN(test_philox_known_answers);
    return MXK_TEST_EXIT();
}
