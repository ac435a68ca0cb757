/*
 * The loader's trust warnings: a plugin library or directory that another user can
 * write is loaded with a warning naming it (abi/README.md, "Trust model"); one only
 * its owner can write loads silently. Copies of the test plugins of test_plugin.c
 * are placed in a temporary directory whose permissions the test sets.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mxk.h"
#include "testing.h"

static char dir[PATH_MAX];

/* Copies TP_DIR/libtp-<variant>.so to dir/<name> with `mode`; writes its path into out. */
static int place(const char *variant, const char *name, mode_t mode, char *out, size_t size) {
    char src[PATH_MAX];
    snprintf(src, sizeof src, "%s/libtp-%s.so", TP_DIR, variant);
    snprintf(out, size, "%s/%s", dir, name);
    FILE *in = fopen(src, "rb"), *to = fopen(out, "wb");
    int ok = in != NULL && to != NULL;
    char buf[65536];
    size_t n;
    while (ok && (n = fread(buf, 1, sizeof buf, in)) > 0)
        ok = fwrite(buf, 1, n, to) == n;
    ok &= in != NULL && !ferror(in);
    if (in)
        fclose(in);
    if (to)
        ok &= fclose(to) == 0;
    return ok && chmod(out, mode) == 0;
}

/* Loads `path` with stderr captured into log; returns the status. */
static mxk_status load_capturing(const char *path, char *log, size_t size) {
    mxk_t_capture c;
    if (!mxk_t_capture_begin(&c))
        return MXK_ERR_IO;
    mxk_status st = mxk_load_plugin(path, NULL);
    mxk_t_capture_end(&c, log, size);
    return st;
}

static void test_world_writable_library_and_directory_warn(void) {
    char lib[PATH_MAX], real[PATH_MAX], expect[3 * PATH_MAX], log[8192];
    CHECK(place("valid", "libwritable.so", 0666, lib, sizeof lib));
    CHECK_EQ_INT(chmod(dir, 0777), 0);
    CHECK(realpath(lib, real) != NULL);
    CHECK_EQ_INT(load_capturing(lib, log, sizeof log), MXK_OK);
    snprintf(expect, sizeof expect,
             "[mxk WARNING] plugin library '%s' is world-writable: anyone who can write it runs "
             "code in this process\n",
             real);
    CHECK_CONTAINS(log, expect);
    char rdir[PATH_MAX];
    CHECK(realpath(dir, rdir) != NULL);
    snprintf(expect, sizeof expect,
             "[mxk WARNING] plugin directory '%s' (of '%s') is world-writable: anyone who can "
             "write it can replace the plugin\n",
             rdir, real);
    CHECK_CONTAINS(log, expect);
    CHECK(mxk_op_plugin("TestOp") != NULL && strcmp(mxk_op_plugin("TestOp"), "tp-valid") == 0);
}

static void test_owner_only_plugin_loads_silently(void) {
    char lib[PATH_MAX], log[8192];
    CHECK_EQ_INT(chmod(dir, 0755), 0);
    CHECK(place("beta", "libsafe.so", 0644, lib, sizeof lib));
    CHECK_EQ_INT(load_capturing(lib, log, sizeof log), MXK_OK);
    CHECK(strstr(log, "WARNING") == NULL);
    if (strstr(log, "WARNING") != NULL)
        fprintf(stderr, "unexpected: %s", log);
}

static void test_sticky_world_writable_directory_is_trusted(void) {
    char lib[PATH_MAX], log[8192];
    CHECK_EQ_INT(chmod(dir, 01777), 0);
    CHECK(place("noinfo", "libsticky.so", 0644, lib, sizeof lib));
    /* rejected (no info function), but only after the permission check */
    CHECK_EQ_INT(load_capturing(lib, log, sizeof log), MXK_ERR_ABI);
    CHECK(strstr(log, "WARNING") == NULL);
}

int main(void) {
    snprintf(dir, sizeof dir, "%s", "/tmp/mxk-trust-XXXXXX");
    if (mkdtemp(dir) == NULL) {
        perror("mkdtemp");
        return 1;
    }
    mxk_init_options o = {.struct_size = sizeof o, .no_plugins = 1};
    if (mxk_init(&o) != MXK_OK) {
        fprintf(stderr, "mxk_init: %s\n", mxk_get_last_error());
        return 1;
    }
    MXK_RUN(test_world_writable_library_and_directory_warn);
    MXK_RUN(test_owner_only_plugin_loads_silently);
    MXK_RUN(test_sticky_world_writable_directory_is_trusted);
    mxk_shutdown();
    /* the loaded copies stay mapped until exit; their files can go now */
    const char *names[] = {"libwritable.so", "libsafe.so", "libsticky.so"};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        char p[PATH_MAX];
        snprintf(p, sizeof p, "%s/%s", dir, names[i]);
        unlink(p);
    }
    rmdir(dir);
    return MXK_TEST_EXIT();
}
