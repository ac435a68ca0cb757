/*
 * Fuzz target for the configuration directory (kernel/config.c: mxk.conf and
 * plugins.d/ *.conf, INI read with inih; the README's "Configuration and
 * plugins"), through the public mxk_init / mxk_shutdown pair.
 *
 * Input: the bytes of mxk.conf up to the first NUL byte; the rest, when there is
 * a NUL, is plugins.d/fuzz.conf. Both are written to a temporary directory that
 * mxk_init is given as its config dir; the library is shut down after each input.
 *
 * Property checked on every input: mxk_init returns MXK_OK, or MXK_ERR_FORMAT /
 * MXK_ERR_INVALID_ARGUMENT / MXK_ERR_IO with a message, and never crashes or
 * hangs; every rejected plugin has a reason; mxk_shutdown returns.
 *
 * Builds as the other targets: libFuzzer (kernel instrumented; a seed's plugin
 * conf names the instrumented cpu-blas by absolute path) and the standalone
 * ctest driver (seeds: the README's example confs).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mxk.h"
#include "fuzz_target.h"

/** Reports a broken property and aborts. */
static void fail(const char *what) {
    fprintf(stderr, "fuzz_config: %s (last error: %s)\n", what, mxk_get_last_error());
    abort();
}

/** The temporary config dir (created once, removed at exit). */
static char conf_dir[256];

/** Path of a file in the config dir. */
static void conf_path(const char *name, char *buf, size_t size) {
    snprintf(buf, size, "%s/%s", conf_dir, name);
}

/** Removes the files and directories of the config dir. */
static void cleanup(void) {
    char p[512];
    conf_path("plugins.d/fuzz.conf", p, sizeof p);
    unlink(p);
    conf_path("plugins.d", p, sizeof p);
    rmdir(p);
    conf_path("mxk.conf", p, sizeof p);
    unlink(p);
    rmdir(conf_dir);
}

/** Writes n bytes at p to the config dir's file `name`. */
static void write_conf(const char *name, const uint8_t *p, size_t n) {
    char path[512];
    conf_path(name, path, sizeof path);
    FILE *f = fopen(path, "wb");
    if (f == NULL || (n > 0 && fwrite(p, 1, n, f) != n) || fclose(f) != 0)
        fail("cannot write a conf file");
}

/** Runs one input; returns mxk_init's status. */
static mxk_status run_one(const uint8_t *data, size_t size) {
    if (conf_dir[0] == '\0') {
        setenv("MXK_ENGINE_TYPE", "NaiveEngine", 0);
        snprintf(conf_dir, sizeof conf_dir, "%s/mxk_fuzz_config_XXXXXX",
                 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
        char sub[512];
        if (mkdtemp(conf_dir) == NULL)
            fail("cannot create the temporary directory");
        conf_path("plugins.d", sub, sizeof sub);
        mkdir(sub, 0777);
        atexit(cleanup);
    }
    const uint8_t *nul = memchr(data, 0, size);
    write_conf("mxk.conf", data, nul ? (size_t)(nul - data) : size);
    char plugin_conf[512];
    conf_path("plugins.d/fuzz.conf", plugin_conf, sizeof plugin_conf);
    if (nul)
        write_conf("plugins.d/fuzz.conf", nul + 1, (size_t)(data + size - nul - 1));
    else
        unlink(plugin_conf);
    mxk_init_options o = {.struct_size = sizeof o, .config_dir = conf_dir};
    mxk_status st = mxk_init(&o);
    if (st != MXK_OK) {
        if (st != MXK_ERR_FORMAT && st != MXK_ERR_INVALID_ARGUMENT && st != MXK_ERR_IO)
            fail("unexpected status");
        if (mxk_get_last_error()[0] == '\0')
            fail("error without a message");
    }
    for (uint32_t i = 0; i < mxk_plugin_rejected_count(); i++) {
        const char *path = NULL, *reason = NULL;
        if (mxk_plugin_rejected_get(i, &path, &reason) != MXK_OK || reason == NULL ||
            reason[0] == '\0')
            fail("a rejected plugin without a reason");
    }
    mxk_shutdown();
    return st;
}

MXK_FUZZ_TARGET(run_one)

#ifdef MXK_FUZZ_STANDALONE

#include "fuzz_driver.h"

/** A seed: mxk.conf, then (when plugin is not NULL) a NUL and the plugin conf. */
static fuzz_seed make_seed(const char *conf, const char *plugin, const char *label) {
    size_t nc = strlen(conf), np = plugin ? strlen(plugin) : 0;
    size_t n = nc + (plugin ? 1 + np : 0);
    uint8_t *p = malloc(n);
    memcpy(p, conf, nc);
    if (plugin) {
        p[nc] = 0;
        memcpy(p + nc + 1, plugin, np);
    }
    if (run_one(p, n) != MXK_OK)
        fail("a valid seed failed");
    return (fuzz_seed){p, n, label};
}

/** Inputs that initialised the library. */
static unsigned long n_ok;

/** Runs one input (the driver passes an exact-size heap copy) and counts it. */
static void drive(const uint8_t *p, size_t n) {
    n_ok += run_one(p, n) == MXK_OK;
}

/** Single-byte replacements: INI syntax. */
static uint8_t replace_byte(size_t at, int r, uint8_t orig) {
    static const char repl[] = {'[', ']', '=', ';', '\n', '#', '-', '9', ' ', ':'};
    (void)orig;
    return (uint8_t)repl[(at * 3 + (size_t)r * 7) % sizeof repl];
}

/** Tokens of the format for the driver's random mutations (fuzz_mutate_tokens). */
static const char *const tokens[] = {
    "[mxk]",       "[plugin]", "[options]",  "[op_backend]", "=", "\n",
    "99999999999", "-1",       "false",      "true",         ",", " ; x",
    "\\",          "\n  ",     "enabled = ", "library = ",   NULL};

/** The config target for the shared driver. */
static const fuzz_target target = {
    .run = drive,
    .seed_ext = ".conf",
    .per_byte = 1,
    .replace = replace_byte,
    .random_runs = 400,
    .slack = 48,
    .tokens = tokens,
    .keep = 0,
    .rng_init = 0x9b05688c2b3e6c1full,
    .rng_per_seed = 1,
};

int main(int argc, char **argv) {
    char plugin[1024];
    snprintf(plugin, sizeof plugin,
             "[plugin]\nlibrary = %s/libmxk-cpu-blas.so\nenabled = true\npriority = 0\n"
             "[options]\nnum_threads = 2\n",
             FUZZ_PLUGIN_DIR);
    fuzz_seed seeds[2] = {
        make_seed("# mxk.conf\n[mxk]\nbackend = cpu-blas          ; most preferred first\n"
                  "num_threads = 0\n[op_backend]\nConvolution = onednn\n",
                  NULL, "global"),
        make_seed("[mxk]\nbackend = onednn, cpu-blas\nnum_threads = 2\n", plugin, "plugin")};
    int rc = fuzz_main(&target, argc, argv, seeds, 2);
    printf("fuzz_config: %lu inputs, %lu initialised, the rest refused with a message\n",
           fuzz_n_inputs, n_ok);
    return rc;
}

#endif /* MXK_FUZZ_STANDALONE */
