/*
 * The atomic writer and the bounded reader (kernel/file_io.c) through .params
 * files (mxk_ndarray_save / mxk_ndarray_load on the test kit): a write that fails
 * half-way (an injected write call), short and interrupted writes, a full disk (a
 * small tmpfs, where this process may mount one), a writer killed with SIGKILL
 * mid-write (a child process running this program), a symlink and special files
 * at the target, FIFOs and /dev/zero as input, sizes beyond the file, and bytes
 * after the list.
 */
#include "nd_bytes.h"
#include "nd_test_util.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "file_io.h"

/** A per-process temporary directory for the test's files. */
static char tmpdir[256];

/** Path of `name` inside tmpdir. */
static void tmp_path(char *out, size_t size, const char *name) {
    snprintf(out, size, "%s/%s", tmpdir, name);
}

/** A float32 array of n values v, v + 1, ... (NULL on failure, CHECKed). */
static mxk_ndarray *make_array(int64_t n, float v) {
    float *h = malloc((size_t)n * sizeof *h);
    for (int64_t i = 0; i < n; i++)
        h[i] = v + (float)i;
    mxk_shape s = nd_shape(1, n, 0, 0, 0);
    mxk_ndarray *a = nd_from(&s, MXK_FLOAT32, nd_cpu(), h);
    free(h);
    CHECK(a != NULL);
    return a;
}

/** 1 when `path` loads as one array of n float32 values v, v + 1, .... */
static int holds(const char *path, int64_t n, float v) {
    uint32_t num = 0;
    mxk_ndarray **out = NULL;
    char **names = NULL;
    if (mxk_ndarray_load(path, &num, &out, &names) != MXK_OK) {
        fprintf(stderr, "load %s: %s\n", path, mxki_last_error_message());
        return 0;
    }
    int ok = num == 1 && mxk_ndarray_size(out[0]) == (uint64_t)n;
    float *h = ok ? malloc((size_t)n * sizeof *h) : NULL;
    if (ok)
        ok = mxk_ndarray_copy_to_host(out[0], h, (uint64_t)n * sizeof *h) == MXK_OK;
    for (int64_t i = 0; ok && i < n; i++)
        ok = h[i] == v + (float)i;
    free(h);
    mxk_ndarray_list_free(num, out, names);
    return ok;
}

/** Number of the writer's temporary files (".mxk-tmp-*") in `dir`. */
static int temp_files(const char *dir) {
    DIR *d = opendir(dir);
    int n = 0;
    for (struct dirent *e; d && (e = readdir(d)) != NULL;)
        n += strncmp(e->d_name, ".mxk-tmp-", 9) == 0;
    if (d)
        closedir(d);
    return n;
}

/** Checks the last error message is exactly `want`. */
static void check_message(const char *want) {
    CHECK(strcmp(mxki_last_error_message(), want) == 0);
    if (strcmp(mxki_last_error_message(), want) != 0)
        fprintf(stderr, "got:  %s\nwant: %s\n", mxki_last_error_message(), want);
}

/* ---- injected write calls ---- */

static size_t hook_budget; /**< bytes failing_write lets through */
static int hook_errno;     /**< the errno of its failure */
static int hook_calls;     /**< calls of choppy_write */

/** Writes until hook_budget bytes are through (short writes), then fails with hook_errno. */
static ssize_t failing_write(int fd, const void *p, size_t n) {
    if (hook_budget == 0) {
        errno = hook_errno;
        return -1;
    }
    ssize_t k = write(fd, p, n < hook_budget ? n : hook_budget);
    if (k > 0)
        hook_budget -= (size_t)k;
    return k;
}

/** Every other call is interrupted (EINTR); the others write at most 7 bytes. */
static ssize_t choppy_write(int fd, const void *p, size_t n) {
    if (hook_calls++ % 2 == 0) {
        errno = EINTR;
        return -1;
    }
    return write(fd, p, n < 7 ? n : 7);
}

/** A write that makes no progress. */
static ssize_t stuck_write(int fd, const void *p, size_t n) {
    (void)fd, (void)p, (void)n;
    return 0;
}

/** A save whose write fails half-way keeps the previous file and removes its temporary file. */
static void test_failed_write_keeps_previous_file(void) {
    char path[512], want[1024];
    tmp_path(path, sizeof path, "ck.params");
    mxk_ndarray *old = make_array(100, 1), *big = make_array(100000, 5);
    CHECK_EQ_INT(mxk_ndarray_save(path, 1, &old, NULL), MXK_OK);
    hook_budget = 150000; /* of about 400,000 bytes */
    hook_errno = ENOSPC;
    mxki_file_io_set_write_hook(failing_write);
    CHECK_EQ_INT(mxk_ndarray_save(path, 1, &big, NULL), MXK_ERR_IO);
    snprintf(want, sizeof want, "cannot write '%s': No space left on device", path);
    check_message(want);
    mxki_file_io_set_write_hook(stuck_write);
    CHECK_EQ_INT(mxk_ndarray_save(path, 1, &big, NULL), MXK_ERR_IO);
    snprintf(want, sizeof want, "cannot write '%s': Input/output error", path);
    check_message(want);
    /* a new file that fails is not created at all */
    char fresh[512];
    tmp_path(fresh, sizeof fresh, "fresh.params");
    CHECK_EQ_INT(mxk_ndarray_save(fresh, 1, &big, NULL), MXK_ERR_IO);
    mxki_file_io_set_write_hook(NULL);
    CHECK(holds(path, 100, 1));
    CHECK(access(fresh, F_OK) != 0);
    CHECK_EQ_INT(temp_files(tmpdir), 0);
    CHECK_EQ_INT(mxk_ndarray_save(path, 1, &big, NULL), MXK_OK);
    CHECK(holds(path, 100000, 5));
    mxk_ndarray_free(old);
    mxk_ndarray_free(big);
}

/** Short writes and EINTR are retried until everything is written. */
static void test_short_and_interrupted_writes(void) {
    char path[512];
    tmp_path(path, sizeof path, "choppy.params");
    mxk_ndarray *a = make_array(3000, 7);
    hook_calls = 0;
    mxki_file_io_set_write_hook(choppy_write);
    CHECK_EQ_INT(mxk_ndarray_save(path, 1, &a, NULL), MXK_OK);
    mxki_file_io_set_write_hook(NULL);
    CHECK(hook_calls > 3000); /* 12,000+ bytes, 7 at a time, every other call interrupted */
    CHECK(holds(path, 3000, 7));
    mxk_ndarray_free(a);
}

/** A symlink at the target is replaced by the file; what it pointed to is untouched. */
static void test_symlink_replaced_not_followed(void) {
    char path[512], victim[512], buf[16] = {0};
    tmp_path(victim, sizeof victim, "victim");
    tmp_path(path, sizeof path, "link.params");
    CHECK(nb_write_file(victim, (const uint8_t *)"keep me", 7) == 0);
    CHECK(symlink(victim, path) == 0);
    mxk_ndarray *a = make_array(10, 2);
    CHECK_EQ_INT(mxk_ndarray_save(path, 1, &a, NULL), MXK_OK);
    struct stat sb;
    CHECK(lstat(path, &sb) == 0 && S_ISREG(sb.st_mode));
    FILE *f = fopen(victim, "rb");
    CHECK(f != NULL && fread(buf, 1, sizeof buf - 1, f) == 7 && strcmp(buf, "keep me") == 0);
    if (f)
        fclose(f);
    CHECK(holds(path, 10, 2));
    mxk_ndarray_free(a);
}

/** A directory, FIFO or device at the target is refused and left as it is. */
static void test_special_targets_refused(void) {
    char path[512], want[1024];
    mxk_ndarray *a = make_array(4, 1);
    tmp_path(path, sizeof path, "fifo.params");
    CHECK(mkfifo(path, 0600) == 0);
    CHECK_EQ_INT(mxk_ndarray_save(path, 1, &a, NULL), MXK_ERR_IO);
    snprintf(want, sizeof want, "cannot write '%s': it is a FIFO, not a regular file", path);
    check_message(want);
    struct stat sb;
    CHECK(lstat(path, &sb) == 0 && S_ISFIFO(sb.st_mode));
    CHECK_EQ_INT(mxk_ndarray_save("/dev/null", 1, &a, NULL), MXK_ERR_IO);
    check_message("cannot write '/dev/null': it is a character device, not a regular file");
    CHECK(lstat("/dev/null", &sb) == 0 && S_ISCHR(sb.st_mode));
    tmp_path(path, sizeof path, "dir.params");
    CHECK(mkdir(path, 0700) == 0);
    CHECK_EQ_INT(mxk_ndarray_save(path, 1, &a, NULL), MXK_ERR_IO);
    snprintf(want, sizeof want, "cannot write '%s': it is a directory, not a regular file", path);
    check_message(want);
    CHECK(lstat(path, &sb) == 0 && S_ISDIR(sb.st_mode));
    CHECK_EQ_INT(mxk_ndarray_save("", 1, &a, NULL), MXK_ERR_INVALID_ARGUMENT);
    check_message("cannot write '': the path is empty");
    tmp_path(path, sizeof path, "sub/");
    CHECK_EQ_INT(mxk_ndarray_save(path, 1, &a, NULL), MXK_ERR_INVALID_ARGUMENT);
    snprintf(want, sizeof want, "cannot write '%s': the path ends with '/'", path);
    check_message(want);
    /* a name longer than NAME_MAX and a path longer than PATH_MAX: never cut short */
    char *longp = malloc(5000);
    int n = snprintf(longp, 5000, "%s/", tmpdir);
    memset(longp + n, 'a', 300);
    longp[n + 300] = '\0';
    CHECK_EQ_INT(mxk_ndarray_save(longp, 1, &a, NULL), MXK_ERR_IO);
    CHECK_CONTAINS(mxki_last_error_message(), "': File name too long");
    memset(longp + n, 'a', 4990 - (size_t)n);
    longp[4990] = '\0';
    CHECK_EQ_INT(mxk_ndarray_save(longp, 1, &a, NULL), MXK_ERR_IO); /* the message is cut */
    CHECK_CONTAINS(mxki_last_error_message(), "cannot write '/");
    free(longp);
    CHECK_EQ_INT(temp_files(tmpdir), 0);
    mxk_ndarray_free(a);
}

/** Replacing a file keeps its permission bits. */
static void test_mode_kept(void) {
    char path[512];
    tmp_path(path, sizeof path, "mode.params");
    mxk_ndarray *a = make_array(4, 1);
    CHECK_EQ_INT(mxk_ndarray_save(path, 1, &a, NULL), MXK_OK);
    CHECK(chmod(path, 0640) == 0);
    CHECK_EQ_INT(mxk_ndarray_save(path, 1, &a, NULL), MXK_OK);
    struct stat sb;
    CHECK(stat(path, &sb) == 0 && (sb.st_mode & 07777) == 0640);
    mxk_ndarray_free(a);
}

/** A FIFO, a device or a directory as input is refused at once (never waited on). */
static void test_special_inputs_refused(void) {
    char path[512], want[1024];
    uint32_t num;
    mxk_ndarray **out;
    char **names;
    tmp_path(path, sizeof path, "in.fifo");
    CHECK(mkfifo(path, 0600) == 0);
    CHECK_EQ_INT(mxk_ndarray_load(path, &num, &out, &names), MXK_ERR_IO);
    snprintf(want, sizeof want, "cannot read NDArray file '%s': it is a FIFO, not a regular file",
             path);
    check_message(want);
    CHECK_EQ_INT(mxk_ndarray_load("/dev/zero", &num, &out, &names), MXK_ERR_IO);
    check_message(
        "cannot read NDArray file '/dev/zero': it is a character device, not a regular file");
    CHECK_EQ_INT(mxk_ndarray_load(tmpdir, &num, &out, &names), MXK_ERR_IO);
    snprintf(want, sizeof want,
             "cannot read NDArray file '%s': it is a directory, not a regular file", tmpdir);
    check_message(want);
    /* the bound of mxk_file_read */
    char *data = NULL;
    size_t size = 0;
    tmp_path(path, sizeof path, "eleven");
    CHECK(nb_write_file(path, (const uint8_t *)"0123456789A", 11) == 0);
    CHECK_EQ_INT(mxk_file_read(path, NULL, 10, &data, &size), MXK_ERR_FORMAT);
    snprintf(want, sizeof want, "cannot read '%s': 11 bytes is more than the limit of 10 bytes",
             path);
    check_message(want);
    CHECK_EQ_INT(mxk_file_read(path, "test file", 11, &data, &size), MXK_OK);
    CHECK(size == 11 && strcmp(data, "0123456789A") == 0);
    free(data);
}

/** Sizes in a header are checked against the file before anything is read or allocated. */
static void test_sizes_checked_before_reading(void) {
    char path[512];
    tmp_path(path, sizeof path, "huge.params");
    const uint64_t huge = 20ull << 30; /* a sparse 20 GiB file: no disk space used */
    nd_bytes b = {0};
    nb_u64(&b, 0x113); /* bad magic */
    CHECK(nb_write_file(path, b.p, b.len) == 0);
    free(b.p);
    if (truncate(path, (off_t)huge) != 0)
        MXK_SKIP("cannot make a sparse 20 GiB file here");
    uint32_t num;
    mxk_ndarray **out;
    char **names;
    CHECK_EQ_INT(mxk_ndarray_load(path, &num, &out, &names), MXK_ERR_FORMAT);
    CHECK_CONTAINS(mxki_last_error_message(), "bad magic 0x113 at offset 0");
    /* one float32 record of 2^40 elements: 4 TiB, more than the file holds */
    memset(&b, 0, sizeof b);
    nb_header(&b, 1);
    nb_u32(&b, 0xF993FAC9u);
    nb_i32(&b, 0);
    nb_i32(&b, 1);
    nb_i64(&b, 1ll << 40);
    nb_i32(&b, 1);
    nb_i32(&b, 0);
    nb_i32(&b, MXK_FLOAT32);
    size_t header = b.len;
    CHECK(nb_write_file(path, b.p, b.len) == 0 && truncate(path, (off_t)huge) == 0);
    free(b.p);
    CHECK_EQ_INT(mxk_ndarray_load(path, &num, &out, &names), MXK_ERR_FORMAT);
    char want[256];
    snprintf(want, sizeof want, "needs 4398046511104 bytes at offset %zu but only %llu remain",
             header, (unsigned long long)(huge - header));
    CHECK_CONTAINS(mxki_last_error_message(), want);
    unlink(path);
}

/** Bytes after the names are an error naming how many and where. */
static void test_bytes_after_the_list(void) {
    char path[512], want[1024];
    tmp_path(path, sizeof path, "tail.params");
    mxk_ndarray *a = make_array(3, 1);
    const char *name = "w";
    CHECK_EQ_INT(mxk_ndarray_save(path, 1, &a, &name), MXK_OK);
    struct stat sb;
    CHECK(stat(path, &sb) == 0);
    FILE *f = fopen(path, "ab");
    CHECK(f != NULL && fwrite("xyz", 1, 3, f) == 3);
    if (f)
        fclose(f);
    uint32_t num;
    mxk_ndarray **out;
    char **names;
    CHECK_EQ_INT(mxk_ndarray_load(path, &num, &out, &names), MXK_ERR_FORMAT);
    snprintf(want, sizeof want,
             "Invalid NDArray file format: end: 3 bytes after the last name at offset %lld (the "
             "list ends there) (file '%s')",
             (long long)sb.st_size, path);
    check_message(want);
    mxk_ndarray_free(a);
}

/** On a full disk (a 256 KiB tmpfs) a failed save keeps the previous file. */
static void test_full_disk(void) {
    if (geteuid() != 0)
        MXK_SKIP("test_full_disk: not root, cannot mount a small tmpfs");
    char dir[512], path[600], want[1024];
    tmp_path(dir, sizeof dir, "small");
    CHECK(mkdir(dir, 0700) == 0);
    if (mount("tmpfs", dir, "tmpfs", 0, "size=256k") != 0) {
        char why[300];
        snprintf(why, sizeof why, "test_full_disk: cannot mount a tmpfs: %s", strerror(errno));
        rmdir(dir);
        MXK_SKIP(why);
    }
    snprintf(path, sizeof path, "%s/ck.params", dir);
    mxk_ndarray *old = make_array(1000, 3), *big = make_array(100000, 5);
    CHECK_EQ_INT(mxk_ndarray_save(path, 1, &old, NULL), MXK_OK);
    CHECK_EQ_INT(mxk_ndarray_save(path, 1, &big, NULL), MXK_ERR_IO);
    snprintf(want, sizeof want, "cannot write '%s': No space left on device", path);
    check_message(want);
    CHECK(holds(path, 1000, 3));
    CHECK_EQ_INT(temp_files(dir), 0);
    mxk_ndarray_free(old);
    mxk_ndarray_free(big);
    CHECK(umount2(dir, MNT_DETACH) == 0);
    rmdir(dir);
}

/** The pipe the slow writer child reports "mid-write" on. */
static int notify_fd = -1;

/** Writes the first chunk, tells the parent, then waits to be killed. */
static ssize_t stalling_write(int fd, const void *p, size_t n) {
    ssize_t k = write(fd, p, n);
    if (write(notify_fd, "w", 1) != 1)
        _exit(3);
    for (;;)
        pause();
    return k;
}

/** The child: saves a big array to `path` through stalling_write. */
static int slow_writer_child(const char *path, int fd) {
    notify_fd = fd;
    nd_start();
    mxk_ndarray *big = make_array(100000, 5);
    mxki_file_io_set_write_hook(stalling_write);
    mxk_ndarray_save(path, 1, &big, NULL);
    return 2; /* not reached: killed while writing */
}

/** A writer killed with SIGKILL in the middle of a save leaves the previous file intact. */
static void test_killed_writer_keeps_previous_file(void) {
    char path[512];
    tmp_path(path, sizeof path, "killed.params");
    mxk_ndarray *old = make_array(100, 1);
    CHECK_EQ_INT(mxk_ndarray_save(path, 1, &old, NULL), MXK_OK);
    mxk_ndarray_free(old);
    int fds[2];
    CHECK(pipe(fds) == 0);
    char fdstr[16];
    snprintf(fdstr, sizeof fdstr, "%d", fds[1]);
    pid_t pid = fork();
    if (pid == 0) {
        close(fds[0]);
        execl("/proc/self/exe", "test_file_io", "--slow-writer", path, fdstr, (char *)NULL);
        _exit(127);
    }
    close(fds[1]);
    CHECK(pid > 0);
    char c = 0;
    ssize_t got = pid > 0 ? read(fds[0], &c, 1) : -1; /* the child is mid-write */
    close(fds[0]);
    CHECK(got == 1 && c == 'w');
    int status = 0;
    if (pid > 0) {
        kill(pid, SIGKILL);
        CHECK(waitpid(pid, &status, 0) == pid);
    }
    CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
    CHECK(holds(path, 100, 1));
    CHECK_EQ_INT(temp_files(tmpdir), 1); /* the killed writer's, left behind */
}

int main(int argc, char **argv) {
    if (argc == 4 && strcmp(argv[1], "--slow-writer") == 0)
        return slow_writer_child(argv[2], atoi(argv[3]));
    const char *base = getenv("TMPDIR");
    snprintf(tmpdir, sizeof tmpdir, "%s/mxk_file_io_XXXXXX", base && *base ? base : "/tmp");
    if (mkdtemp(tmpdir) == NULL) {
        perror("mkdtemp");
        return 1;
    }
    nd_start();
    MXK_RUN(test_failed_write_keeps_previous_file);
    MXK_RUN(test_short_and_interrupted_writes);
    MXK_RUN(test_symlink_replaced_not_followed);
    MXK_RUN(test_special_targets_refused);
    MXK_RUN(test_mode_kept);
    MXK_RUN(test_special_inputs_refused);
    MXK_RUN(test_sizes_checked_before_reading);
    MXK_RUN(test_bytes_after_the_list);
    MXK_RUN(test_full_disk);
    MXK_RUN(test_killed_writer_keeps_previous_file);
    nd_stop();
    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", tmpdir);
    return MXK_TEST_EXIT();
}
