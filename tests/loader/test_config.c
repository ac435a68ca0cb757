/*
 * Config-dir discovery and conf files: search order, mxk.conf, plugins.d with
 * options, relative library paths, missing libraries, malformed and disabled confs,
 * and conf files that are FIFOs, devices, directories or symlink loops.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"
#include "mxk.h"
#include "testing.h"

static char root[4096];

static void write_file(const char *dir, const char *name, const char *text) {
    char p[4096];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    FILE *f = fopen(p, "w");
    if (f) {
        fputs(text, f);
        fclose(f);
    }
}

static const char *sub(const char *name) {
    static char p[4][4096];
    static int k;
    k = (k + 1) % 4;
    snprintf(p[k], sizeof p[k], "%s/%s", root, name);
    return p[k];
}

static int rejected_with(const char *needle) {
    for (uint32_t i = 0; i < mxk_plugin_rejected_count(); i++) {
        const char *path, *reason;
        if (mxk_plugin_rejected_get(i, &path, &reason) == MXK_OK && strstr(reason, needle))
            return 1;
    }
    return 0;
}

/* The config layers: an explicit or MXK_CONFIG_DIR dir alone; else the install's,
 * then the user's over it. */
static void test_search_order(void) {
    mxk_config_layers out;
    mkdir(sub("a"), 0755);
    mkdir(sub("b"), 0755);
    mkdir(sub("xdg"), 0755);
    mkdir(sub("xdg/mxk"), 0755);
    setenv("MXK_CONFIG_DIR", sub("a"), 1);
    CHECK_EQ_INT(mxki_config_find_dirs(sub("b"), &out), MXK_OK);
    CHECK(out.n == 1 && strcmp(out.dirs[0], sub("b")) == 0); /* explicit flag first */
    CHECK_EQ_INT(mxki_config_find_dirs(NULL, &out), MXK_OK);
    CHECK(out.n == 1 && strcmp(out.dirs[0], sub("a")) == 0); /* then MXK_CONFIG_DIR */
    CHECK_EQ_INT(mxki_config_find_dirs("/nonexistent/conf", &out), MXK_ERR_NOT_FOUND);
    CHECK_CONTAINS(mxk_get_last_error(),
                   "config dir '/nonexistent/conf' (given explicitly) is not a directory");
    setenv("MXK_CONFIG_DIR", "/nonexistent/env", 1);
    CHECK_EQ_INT(mxki_config_find_dirs(NULL, &out), MXK_ERR_NOT_FOUND);
    CHECK_CONTAINS(mxk_get_last_error(),
                   "config dir '/nonexistent/env' (from MXK_CONFIG_DIR) is not a directory");
    unsetenv("MXK_CONFIG_DIR");
    setenv("XDG_CONFIG_HOME", sub("xdg"), 1);
    CHECK_EQ_INT(mxki_config_find_dirs(NULL, &out), MXK_OK);
    /* the install's etc/mxk (found from libmxk's location: the build tree's), then
     * $XDG_CONFIG_HOME/mxk over it */
    CHECK(out.n == 2 && strcmp(out.dirs[0], BUILD_CONFDIR) == 0 &&
          strcmp(out.dirs[1], sub("xdg/mxk")) == 0);
    setenv("XDG_CONFIG_HOME", sub("a"), 1); /* no mxk/ inside */
    CHECK_EQ_INT(mxki_config_find_dirs(NULL, &out), MXK_OK);
    CHECK(out.n == 1 && strcmp(out.dirs[0], BUILD_CONFDIR) == 0);
    if (out.n != 1 || strcmp(out.dirs[0], BUILD_CONFDIR) != 0)
        fprintf(stderr, "got '%s', expected '%s'\n", out.n ? out.dirs[0] : "", BUILD_CONFDIR);
}

/* expect_install_dir(prefix, plain, want): the config dir of a libmxk in <prefix>/<libdir>. */
static void expect_install_dir(const char *prefix, int plain, const char *want) {
    char libdir[512], out[512];
    snprintf(libdir, sizeof libdir, "%s/%s", prefix, INSTALL_LIBDIR);
    mxki_config_install_dir(libdir, plain, out, sizeof out);
    CHECK(strcmp(out, want) == 0);
    if (strcmp(out, want) != 0)
        fprintf(stderr, "libdir '%s' (plain %d): got '%s', expected '%s'\n", libdir, plain, out,
                want);
}

/* GNUInstallDirs' CMAKE_INSTALL_FULL_SYSCONFDIR rule (sdk/cmake/mxkInstallDirs.cmake). */
static void test_install_dir(void) {
    if (INSTALL_SYSCONFDIR[0] == '/' || strcmp(INSTALL_SYSCONFDIR, "etc") != 0) {
        printf("  (built with sysconfdir '%s': the table below assumes 'etc')\n",
               INSTALL_SYSCONFDIR);
        return;
    }
    expect_install_dir("/usr", 0, "/etc/mxk");
    expect_install_dir("", 0, "/etc/mxk"); /* prefix "/" */
    expect_install_dir("/usr/local", 0, "/usr/local/etc/mxk");
    expect_install_dir("/opt/mxk", 0, "/etc/opt/mxk/mxk");
    expect_install_dir("/opt/homebrew/mxk", 0, "/opt/homebrew/mxk/etc/mxk");
    expect_install_dir("/opt", 0, "/opt/etc/mxk");
    expect_install_dir("/home/u/build", 0, "/home/u/build/etc/mxk");
    expect_install_dir("/usr2", 0, "/usr2/etc/mxk");
    expect_install_dir("/usr", 1, "/usr/etc/mxk");
    expect_install_dir("/opt/mxk/build", 1, "/opt/mxk/build/etc/mxk");
    char out[64] = "x";
    mxki_config_install_dir("/usr/share", 0, out, sizeof out); /* not <prefix>/<libdir> */
    CHECK(out[0] == '\0');
}

static void test_bad_global_conf(void) {
    mkdir(sub("badconf"), 0755);
    write_file(sub("badconf"), "mxk.conf", "[mxk]\nbacknd = x\n");
    CHECK_EQ_INT(mxki_config_apply(sub("badconf"), 1), MXK_ERR_FORMAT);
    CHECK_CONTAINS(mxk_get_last_error(),
                   "mxk.conf:2: unknown key 'backnd' in [mxk]; valid keys: backend, num_threads");
    write_file(sub("badconf"), "mxk.conf", "[mxk]\nnum_threads = lots\n");
    CHECK_EQ_INT(mxki_config_apply(sub("badconf"), 1), MXK_ERR_FORMAT);
    CHECK_CONTAINS(mxk_get_last_error(), "num_threads must be an integer in [0, 4096], got 'lots'");
    write_file(sub("badconf"), "mxk.conf", "[mxk\n");
    CHECK_EQ_INT(mxki_config_apply(sub("badconf"), 1), MXK_ERR_FORMAT);
    CHECK_CONTAINS(mxk_get_last_error(), "mxk.conf:1: syntax error");
}

/** Checks the last error message is exactly `want`. */
static void check_message(const char *want) {
    CHECK(strcmp(mxk_get_last_error(), want) == 0);
    if (strcmp(mxk_get_last_error(), want) != 0)
        fprintf(stderr, "got:  %s\nwant: %s\n", mxk_get_last_error(), want);
}

/**
 * An mxk.conf that exists but cannot be read is an error naming it (a FIFO is not
 * waited on, /dev/zero not read); only a missing one is skipped. Lines longer
 * than inih reads whole are refused instead of being cut in pieces.
 */
static void test_unreadable_global_conf(void) {
    char conf[4096], want[8192];
    mkdir(sub("special"), 0755);
    snprintf(conf, sizeof conf, "%s/mxk.conf", sub("special"));
    CHECK_EQ_INT(mxki_config_apply(sub("special"), 1), MXK_OK); /* absent: fine */
    CHECK(mkfifo(conf, 0600) == 0);
    CHECK_EQ_INT(mxki_config_apply(sub("special"), 1), MXK_ERR_IO);
    snprintf(want, sizeof want, "cannot read conf file '%s': it is a FIFO, not a regular file",
             conf);
    check_message(want);
    unlink(conf);
    CHECK(mkdir(conf, 0755) == 0);
    CHECK_EQ_INT(mxki_config_apply(sub("special"), 1), MXK_ERR_IO);
    snprintf(want, sizeof want, "cannot read conf file '%s': it is a directory, not a regular file",
             conf);
    check_message(want);
    rmdir(conf);
    CHECK(symlink("/dev/zero", conf) == 0);
    CHECK_EQ_INT(mxki_config_apply(sub("special"), 1), MXK_ERR_IO);
    snprintf(want, sizeof want,
             "cannot read conf file '%s': it is a character device, not a regular file", conf);
    check_message(want);
    unlink(conf);
    CHECK(symlink("mxk.conf", conf) == 0); /* a loop */
    CHECK_EQ_INT(mxki_config_apply(sub("special"), 1), MXK_ERR_IO);
    snprintf(want, sizeof want, "cannot open conf file '%s': Too many levels of symbolic links",
             conf);
    check_message(want);
    unlink(conf);
    char line[400];
    memset(line, 'x', sizeof line);
    memcpy(line, "[mxk]\nbackend = ", 16);
    line[sizeof line - 1] = '\0';
    write_file(sub("special"), "mxk.conf", line);
    CHECK_EQ_INT(mxki_config_apply(sub("special"), 1), MXK_ERR_FORMAT);
    snprintf(want, sizeof want, "%s:2: the line is longer than 197 characters", conf);
    check_message(want);
    FILE *f = fopen(conf, "wb");
    CHECK(f != NULL && fwrite("[mxk]\nbackend = a\0b\n", 1, 20, f) == 20);
    if (f)
        fclose(f);
    CHECK_EQ_INT(mxki_config_apply(sub("special"), 1), MXK_ERR_FORMAT);
    snprintf(want, sizeof want, "%s: the file contains a NUL byte", conf);
    check_message(want);
    unlink(conf);
    if (geteuid() == 0) {
        printf("note: running as root, which reads a mode-000 file: that case is not checked\n");
        return;
    }
    write_file(sub("special"), "mxk.conf", "[mxk]\n");
    CHECK(chmod(conf, 0) == 0);
    CHECK_EQ_INT(mxki_config_apply(sub("special"), 1), MXK_ERR_IO);
    snprintf(want, sizeof want, "cannot open conf file '%s': Permission denied", conf);
    check_message(want);
    unlink(conf);
}

static void test_plugins_d(void) {
    char d[4096], text[8192];
    snprintf(d, sizeof d, "%s", sub("conf"));
    mkdir(d, 0755);
    mkdir(sub("conf/plugins.d"), 0755);
    write_file(d, "mxk.conf", "# test\n[mxk]\nbackend = beta, alpha\n[op_backend]\n");
    snprintf(text, sizeof text, "[plugin]\nlibrary = %s/libtp-valid.so\n[options]\nfail = yes\n",
             TP_DIR);
    write_file(sub("conf/plugins.d"), "10-valid-failing.conf", text);
    write_file(sub("conf/plugins.d"), "20-valid.conf", "[plugin]\nlibrary = libtp-valid.so\n");
    write_file(sub("conf/plugins.d"), "30-missing.conf", "[plugin]\nlibrary = libnope.so\n");
    write_file(sub("conf/plugins.d"), "40-syntax.conf", "[plugin]\nlibrary\n");
    write_file(sub("conf/plugins.d"), "50-typo.conf", "[plugin]\nlibary = libtp-beta.so\n");
    write_file(sub("conf/plugins.d"), "60-disabled.conf",
               "[plugin]\nlibrary = libtp-beta.so\nenabled = false\n");
    write_file(sub("conf/plugins.d"), "70-nolib.conf", "[plugin]\nenabled = true\n");
    write_file(sub("conf/plugins.d"), "README", "not a conf file\n");
    CHECK(mkfifo(sub("conf/plugins.d/80-fifo.conf"), 0600) == 0);
    CHECK(symlink("/dev/zero", sub("conf/plugins.d/90-zero.conf")) == 0);
    setenv("MXK_PLUGIN_PATH", "/nonexistent:" TP_DIR, 1);
    mxk_init_options o = {.struct_size = sizeof o, .config_dir = d};
    CHECK_EQ_INT(mxk_init(&o), MXK_OK);
    CHECK(strcmp(mxk_config_dir(), d) == 0);
    CHECK(strcmp(mxk_get_backend_preference(), "beta,alpha") == 0);
    CHECK_EQ_INT(mxk_plugin_count(), 1);
    mxk_plugin_record r = {.struct_size = sizeof r};
    CHECK_EQ_INT(mxk_plugin_get(0, &r), MXK_OK);
    CHECK(strcmp(r.name, "tp-valid") == 0);
    CHECK(rejected_with("init failed (MXK_ERR_INVALID_ARGUMENT): option fail=yes was given"));
    CHECK(rejected_with("library 'libnope.so' not found (looked in: "));
    CHECK(rejected_with("line 2: syntax error"));
    CHECK(
        rejected_with("unknown key 'libary' in [plugin]; valid keys: library, enabled, priority"));
    CHECK(rejected_with("[plugin] has no 'library' key"));
    CHECK(!rejected_with("README"));
    CHECK(rejected_with("80-fifo.conf': it is a FIFO, not a regular file"));
    CHECK(rejected_with("90-zero.conf': it is a character device, not a regular file"));
    CHECK(mxk_op_kernel_count("TestOp") == 1); /* the disabled beta kernel is absent */
    /* where things came from: one layer, the plugin's conf, the disabled conf */
    const char *got = NULL;
    CHECK_EQ_INT(mxk_config_dir_count(), 1);
    CHECK_EQ_INT(mxk_config_dir_get(0, &got), MXK_OK);
    CHECK(got != NULL && strcmp(got, d) == 0);
    CHECK_EQ_INT(mxk_config_dir_get(1, &got), MXK_ERR_NOT_FOUND);
    CHECK_CONTAINS(mxk_get_last_error(), "config dir index 1 out of range (1 in use)");
    char want[8192];
    snprintf(want, sizeof want, "%s/plugins.d/20-valid.conf", d);
    CHECK(strcmp(mxk_plugin_origin("tp-valid"), want) == 0);
    CHECK(mxk_plugin_origin("nope") == NULL);
    CHECK_EQ_INT(mxk_plugin_disabled_count(), 1);
    CHECK_EQ_INT(mxk_plugin_disabled_get(0, &got), MXK_OK);
    snprintf(want, sizeof want, "%s/plugins.d/60-disabled.conf", d);
    CHECK(got != NULL && strcmp(got, want) == 0);
    CHECK_EQ_INT(mxk_plugin_disabled_get(1, &got), MXK_ERR_NOT_FOUND);
    CHECK_CONTAINS(mxk_get_last_error(), "disabled conf index 1 out of range (1 disabled)");
    /* the unknown-operator error names the nearest operator, then what was not loaded */
    mxk_op_doc doc;
    CHECK_EQ_INT(mxk_op_get_doc("TestOq", &doc), MXK_ERR_NOT_FOUND);
    snprintf(want, sizeof want,
             "unknown operator 'TestOq': no loaded plugin registers it; did you mean 'TestOp'? "
             "(plugins not loaded: %s/plugins.d/60-disabled.conf (enabled = false); %s/plugins.d/"
             "10-valid-failing.conf (rejected: plugin 'tp-valid': init failed",
             d, d);
    CHECK_CONTAINS(mxk_get_last_error(), want);
    /* a second mxk_init meets the same candidates: recorded (and warned about) once */
    uint32_t nrejected = mxk_plugin_rejected_count();
    mxk_shutdown();
    CHECK_EQ_INT(mxk_init(&o), MXK_OK);
    CHECK_EQ_INT(mxk_plugin_rejected_count(), nrejected);
    CHECK_EQ_INT(mxk_plugin_disabled_count(), 1);
    mxk_shutdown();
}

/* With the build's plugins (the install's config dir), a mistyped iterator type is
 * answered with the nearest registered one. */
static void test_unknown_iterator(void) {
    mxk_init_options o = {.struct_size = sizeof o, .config_dir = BUILD_CONFDIR};
    CHECK_EQ_INT(mxk_init(&o), MXK_OK);
    if (mxk_iterator_plugin("MNISTIter") == NULL) {
        mxk_shutdown();
        MXK_SKIP("the io-recordio plugin is not part of this build");
    }
    mxk_data_iter *it = NULL;
    CHECK_EQ_INT(mxk_data_iter_create("MNISTIte", 0, NULL, NULL, &it), MXK_ERR_NOT_FOUND);
    CHECK_CONTAINS(mxk_get_last_error(), "unknown data iterator 'MNISTIte'; registered: ");
    CHECK_CONTAINS(mxk_get_last_error(), "; did you mean 'MNISTIter'?");
    CHECK(it == NULL);
    mxk_shutdown();
}

int main(void) {
    snprintf(root, sizeof root, "%s/mxk-config-test-%d", "/tmp", (int)getpid());
    mkdir(root, 0755);
    MXK_RUN(test_search_order);
    MXK_RUN(test_install_dir);
    MXK_RUN(test_bad_global_conf);
    MXK_RUN(test_unreadable_global_conf);
    MXK_RUN(test_plugins_d);
    MXK_RUN(test_unknown_iterator);
    char cmd[4200];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", root);
    return MXK_TEST_EXIT();
}
