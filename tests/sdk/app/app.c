/*
 * A minimal mxk application (tests/sdk, tests/install) linking mxk::mxk and
 * mxk::train: initialises libmxk with the config dir
 * given as argv[1] (or the default search), then prints, one per line,
 *
 *   version <mxk_version()>
 *   checkpoint <mxkt_checkpoint_name("ck/mlp", 3, "params")> (mxk_train linked)
 *   config_dir <mxk_config_dir()>
 *   plugin <name> (one line per loaded plugin)
 *   rejected <path>: <reason> (one line per rejected candidate)
 *   ScaledTanh(1) = <value> (when ScaledTanh and a CPU device are available)
 *
 * for tests/sdk/sdk_example.cmake to check. Exit status 0, or 1 on an error
 * (message on stderr).
 */
#include <stdio.h>

#include "mxk.h"
#include "mxk_train.h"

/** Runs ScaledTanh (default attributes) on the one-element array {1}; prints the result. */
static int run_scaled_tanh(void) {
    mxk_shape s = {.ndim = 1, .dims = {1}};
    mxk_context cpu = {MXK_DEV_CPU, 0};
    mxk_ndarray *x = NULL, *y[16] = {0};
    uint32_t ny = 0;
    float v = 0.0f;
    if (mxk_ndarray_full(&s, MXK_FLOAT32, cpu, 1.0, &x) != MXK_OK ||
        mxk_imperative_invoke("ScaledTanh", 1, &x, &ny, y, 0, NULL, NULL) != MXK_OK ||
        mxk_ndarray_copy_to_host(y[0], &v, sizeof v) != MXK_OK) {
        fprintf(stderr, "ScaledTanh: %s\n", mxk_get_last_error());
        return 1;
    }
    printf("ScaledTanh(1) = %.6f\n", (double)v);
    mxk_ndarray_free(y[0]);
    mxk_ndarray_free(x);
    return 0;
}

/** Initialises mxk and prints what it loaded (see the file comment). */
int main(int argc, char **argv) {
    mxk_init_options o = {.struct_size = sizeof o, .config_dir = argc > 1 ? argv[1] : NULL};
    if (mxk_init(&o) != MXK_OK) {
        fprintf(stderr, "mxk_init: %s\n", mxk_get_last_error());
        return 1;
    }
    printf("version %s\n", mxk_version());
    char ck[64];
    mxkt_checkpoint_name(ck, sizeof ck, "ck/mlp", 3, "params");
    printf("checkpoint %s\n", ck);
    printf("config_dir %s\n", mxk_config_dir());
    for (uint32_t i = 0; i < mxk_plugin_count(); i++) {
        mxk_plugin_record r = {.struct_size = sizeof r};
        if (mxk_plugin_get(i, &r) == MXK_OK)
            printf("plugin %s\n", r.name);
    }
    for (uint32_t i = 0; i < mxk_plugin_rejected_count(); i++) {
        const char *path = "", *reason = "";
        mxk_plugin_rejected_get(i, &path, &reason);
        printf("rejected %s: %s\n", path, reason);
    }
    int rc = 0;
    if (mxk_op_plugin("ScaledTanh") != NULL && mxk_device_count(MXK_DEV_CPU) > 0)
        rc = run_scaled_tanh();
    mxk_shutdown();
    return rc;
}
