/*
 * Library set-up shared by the fuzz targets that run through libmxk and its
 * plugins (fuzz_op_attrs, fuzz_graph, fuzz_iter_*, fuzz_states). A target defines
 * FUZZ_PLUGINS, a NULL-terminated list of plugin file names, before including
 * this header; the build gives FUZZ_CONFDIR (the build tree's config dir) and
 * FUZZ_PLUGIN_DIR: the build's plugins for the standalone drivers, their
 * instrumented copies (tests/fuzz/CMakeLists.txt, fuzz-plugins/) for the
 * libFuzzer binaries.
 *
 * fuzz_kernel_start() starts the library once with the synchronous NaiveEngine,
 * one kernel thread and a small MXK_MEM_LIMIT (so that a fuzzed shape cannot
 * allocate gigabytes), loads only the listed plugins, and aborts when any of
 * that fails. libFuzzer calls it from LLVMFuzzerInitialize, before the first
 * input, so that the plugins' coverage counters are registered up front.
 */
#ifndef MXK_FUZZ_KERNEL_H
#define MXK_FUZZ_KERNEL_H

#include <stdio.h>
#include <stdlib.h>

#include "mxk.h"

/** Largest number of elements of a fuzzed array (inputs, shapes the targets bind). */
#define FUZZ_MAX_ELEMS (1u << 16)

/** Reports a broken property with the library's last error and aborts. */
static void fuzz_kernel_fail(const char *target, const char *what) {
    fprintf(stderr, "%s: %s (last error: %s)\n", target, what, mxk_get_last_error());
    abort();
}

/** Starts the library and loads FUZZ_PLUGINS from FUZZ_PLUGIN_DIR (once). */
static void fuzz_kernel_start(void) {
    static int started;
    static const char *const plugins[] = FUZZ_PLUGINS;
    if (started)
        return;
    started = 1;
    setenv("MXK_ENGINE_TYPE", "NaiveEngine", 0);
    setenv("MXK_NUM_THREADS", "1", 0);
    setenv("MXK_MEM_LIMIT", "67108864", 0);
    mxk_init_options o = {.struct_size = sizeof o, .config_dir = FUZZ_CONFDIR, .no_plugins = 1};
    if (mxk_init(&o) != MXK_OK)
        fuzz_kernel_fail("fuzz", "mxk_init failed");
    for (int i = 0; plugins[i] != NULL; i++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", FUZZ_PLUGIN_DIR, plugins[i]);
        if (mxk_load_plugin(path, NULL) != MXK_OK)
            fuzz_kernel_fail(path, "cannot load the plugin");
    }
}

/** libFuzzer's start-up hook: the library before the first input. */
int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerInitialize(int *argc, char ***argv) {
    (void)argc;
    (void)argv;
    fuzz_kernel_start();
    return 0;
}

#endif /* MXK_FUZZ_KERNEL_H */
