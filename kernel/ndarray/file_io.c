/*
 * Atomic writes and bounded, non-blocking reads of the files mxk writes and reads
 * (mxk.h "Files"; kernel-internal part in file_io.h).
 *
 * Writing: a temporary file ".mxk-tmp-<pid>-<n>" is created with O_EXCL in the
 * target's directory (opened once, so the temporary file and the rename stay in
 * one directory even if the path's components change meanwhile), written through
 * a 64 KiB buffer with EINTR and short-write handling, fsync'ed, closed, and
 * renamed over the target; then the directory is fsync'ed. Upstream MXNet writes
 * in place (dmlc-core src/io/local_filesys.cc LocalFileSystem::Open "w"); the
 * replacement by rename is what POSIX offers for "the old file or the new one".
 *
 * Reading: open with O_NONBLOCK (so a FIFO does not wait for a writer), fstat,
 * refuse what is not a regular file, clear O_NONBLOCK, and bound the size.
 *
 * Thread-safety: every function is thread-safe; the write hook is for tests only.
 */
#include "file_io.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "error.h"

/** Bytes buffered by a writer before a write(2). */
#define WRITER_BUFFER (64 * 1024)

/** The write call of every writer (tests replace it; see file_io.h). */
static mxk_file_write_fn write_fn = write;

void mxki_file_io_set_write_hook(mxk_file_write_fn fn) {
    write_fn = fn ? fn : write;
}

/**
 * A file being written (mxk.h): the target's open directory, the temporary file
 * in it and a write buffer. Owned by the caller of mxk_file_writer_open until
 * commit or abort frees it.
 */
struct mxk_file_writer {
    int dirfd, fd;
    char *path;        /**< the target as given (messages, and base points into it) */
    const char *base;  /**< the target's name in its directory */
    char tmp[64];      /**< the temporary file's name in the directory */
    mxk_status failed; /**< MXK_OK, or the sticky error of a failed write */
    int err_no;        /**< errno of that failure */
    size_t len;        /**< bytes in buf */
    uint8_t buf[WRITER_BUFFER];
};

/** "a FIFO" etc. for a file type that is not a regular file. */
static const char *kind_name(mode_t mode) {
    if (S_ISDIR(mode))
        return "a directory";
    if (S_ISFIFO(mode))
        return "a FIFO";
    if (S_ISCHR(mode))
        return "a character device";
    if (S_ISBLK(mode))
        return "a block device";
    if (S_ISSOCK(mode))
        return "a socket";
    return "a special file";
}

/** " WHAT" or "". */
static const char *sp(const char *what) {
    return what && *what ? " " : "";
}

/**
 * The checks of mxk_file_check_target; on success *dirfd is the target's open
 * directory (the caller closes it), *base its name there and *mode its existing
 * mode (0 when absent).
 */
static mxk_status prepare_target(const char *path, int *dirfd, const char **base, mode_t *mode) {
    *dirfd = -1;
    *mode = 0;
    if (path == NULL || path[0] == '\0')
        return mxk_set_error(MXK_ERR_INVALID_ARGUMENT, "cannot write '': the path is empty");
    size_t n = strlen(path);
    if (n >= PATH_MAX)
        return mxk_set_error(MXK_ERR_IO, "cannot write '%s': %s", path, strerror(ENAMETOOLONG));
    if (path[n - 1] == '/')
        return mxk_set_error(MXK_ERR_INVALID_ARGUMENT, "cannot write '%s': the path ends with '/'",
                             path);
    struct stat sb;
    if (lstat(path, &sb) == 0) {
        if (!S_ISREG(sb.st_mode) && !S_ISLNK(sb.st_mode))
            return mxk_set_error(MXK_ERR_IO, "cannot write '%s': it is %s, not a regular file",
                                 path, kind_name(sb.st_mode));
        if (S_ISREG(sb.st_mode))
            *mode = sb.st_mode & 07777;
    } else if (errno != ENOENT) {
        return mxk_set_error(MXK_ERR_IO, "cannot write '%s': %s", path, strerror(errno));
    }
    const char *slash = strrchr(path, '/');
    char dir[PATH_MAX];
    if (slash == NULL)
        snprintf(dir, sizeof dir, ".");
    else if (slash == path)
        snprintf(dir, sizeof dir, "/");
    else
        snprintf(dir, sizeof dir, "%.*s", (int)(slash - path), path);
    *base = slash ? slash + 1 : path;
    *dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (*dirfd < 0)
        return mxk_set_error(MXK_ERR_IO, "cannot write '%s': %s", path, strerror(errno));
    return MXK_OK;
}

mxk_status mxk_file_check_target(const char *path) {
    int dirfd;
    const char *base;
    mode_t mode;
    mxk_status st = prepare_target(path, &dirfd, &base, &mode);
    if (dirfd >= 0)
        close(dirfd);
    return st;
}

/** Creates the temporary file in w->dirfd (a fresh name per try; O_EXCL). */
static mxk_status create_temp(mxk_file_writer *w, mode_t mode) {
    static atomic_uint seq;
    for (int tries = 0; tries < 100; tries++) {
        snprintf(w->tmp, sizeof w->tmp, ".mxk-tmp-%ld-%u", (long)getpid(),
                 atomic_fetch_add(&seq, 1));
        w->fd =
            openat(w->dirfd, w->tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0666);
        if (w->fd >= 0)
            break;
        if (errno != EEXIST)
            return mxk_set_error(MXK_ERR_IO, "cannot write '%s': %s", w->path, strerror(errno));
    }
    if (w->fd < 0)
        return mxk_set_error(MXK_ERR_IO, "cannot write '%s': %s", w->path, strerror(EEXIST));
    if (mode != 0 && fchmod(w->fd, mode) != 0) {
        int e = errno;
        close(w->fd);
        w->fd = -1;
        unlinkat(w->dirfd, w->tmp, 0);
        return mxk_set_error(MXK_ERR_IO, "cannot write '%s': %s", w->path, strerror(e));
    }
    return MXK_OK;
}

/** Frees a writer, removing its temporary file when it still exists. */
static void writer_free(mxk_file_writer *w, int remove_temp) {
    if (w->fd >= 0)
        close(w->fd);
    if (remove_temp && w->tmp[0])
        unlinkat(w->dirfd, w->tmp, 0);
    if (w->dirfd >= 0)
        close(w->dirfd);
    free(w->path);
    free(w);
}

mxk_status mxk_file_writer_open(const char *path, mxk_file_writer **out) {
    if (out == NULL)
        return mxk_set_error(MXK_ERR_INVALID_ARGUMENT, "mxk_file_writer_open: out is NULL");
    *out = NULL;
    int dirfd;
    const char *base;
    mode_t mode;
    mxk_status st = prepare_target(path, &dirfd, &base, &mode);
    if (st != MXK_OK) {
        if (dirfd >= 0)
            close(dirfd);
        return st;
    }
    mxk_file_writer *w = calloc(1, sizeof *w);
    char *copy = strdup(path);
    if (w == NULL || copy == NULL) {
        free(w);
        free(copy);
        close(dirfd);
        return mxk_set_error(MXK_ERR_OUT_OF_MEMORY, "cannot write '%s': out of memory", path);
    }
    w->dirfd = dirfd;
    w->fd = -1;
    w->path = copy;
    w->base = copy + (base - path);
    st = create_temp(w, mode);
    if (st != MXK_OK) {
        w->tmp[0] = '\0';
        writer_free(w, 0);
        return st;
    }
    *out = w;
    return MXK_OK;
}

/** Records a write failure (sticky) and sets the error. */
static mxk_status writer_fail(mxk_file_writer *w, int err_no) {
    if (w->failed == MXK_OK) {
        w->failed = MXK_ERR_IO;
        w->err_no = err_no;
    }
    return mxk_set_error(w->failed, "cannot write '%s': %s", w->path, strerror(w->err_no));
}

/** Writes n bytes to the temporary file (EINTR and short writes handled). */
static mxk_status write_all(mxk_file_writer *w, const uint8_t *p, size_t n) {
    while (n > 0) {
        ssize_t k = write_fn(w->fd, p, n);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return writer_fail(w, k < 0 ? errno : EIO);
        p += k;
        n -= (size_t)k;
    }
    return MXK_OK;
}

/** Writes the buffer out. */
static mxk_status writer_flush(mxk_file_writer *w) {
    mxk_status st = write_all(w, w->buf, w->len);
    w->len = 0;
    return st;
}

mxk_status mxk_file_writer_write(mxk_file_writer *w, const void *data, size_t size) {
    if (w == NULL || (data == NULL && size > 0))
        return mxk_set_error(MXK_ERR_INVALID_ARGUMENT, "mxk_file_writer_write: NULL argument");
    if (w->failed != MXK_OK)
        return writer_fail(w, w->err_no);
    if (size > sizeof w->buf - w->len) {
        mxk_status st = writer_flush(w);
        if (st != MXK_OK || size >= sizeof w->buf)
            return st != MXK_OK ? st : write_all(w, data, size);
    }
    memcpy(w->buf + w->len, data, size);
    w->len += size;
    return MXK_OK;
}

mxk_status mxk_file_writer_commit(mxk_file_writer *w) {
    if (w == NULL)
        return mxk_set_error(MXK_ERR_INVALID_ARGUMENT, "mxk_file_writer_commit: writer is NULL");
    mxk_status st = w->failed != MXK_OK ? writer_fail(w, w->err_no) : writer_flush(w);
    if (st == MXK_OK && fsync(w->fd) != 0)
        st = writer_fail(w, errno);
    int fd = w->fd;
    w->fd = -1;
    if (close(fd) != 0 && st == MXK_OK)
        st = writer_fail(w, errno);
    if (st == MXK_OK && renameat(w->dirfd, w->tmp, w->dirfd, w->base) != 0)
        st = writer_fail(w, errno);
    if (st != MXK_OK) {
        writer_free(w, 1);
        return st;
    }
    /* The target is replaced; a directory that cannot be synced (EINVAL: the file
     * system does not support it) is not an error. */
    if (fsync(w->dirfd) != 0 && errno != EINVAL)
        st = writer_fail(w, errno);
    writer_free(w, 0);
    return st;
}

void mxk_file_writer_abort(mxk_file_writer *w) {
    if (w != NULL)
        writer_free(w, 1);
}

mxk_status mxk_file_write(const char *path, const void *data, size_t size) {
    mxk_file_writer *w = NULL;
    mxk_status st = mxk_file_writer_open(path, &w);
    if (st != MXK_OK)
        return st;
    st = mxk_file_writer_write(w, data, size);
    if (st != MXK_OK) {
        mxk_file_writer_abort(w);
        return st;
    }
    return mxk_file_writer_commit(w);
}

/* ------------------------------------------------------------------------- */
/* Reading                                                                   */
/* ------------------------------------------------------------------------- */

mxk_status mxki_file_open_read(const char *path, const char *what, uint64_t max_size, int *fd,
                               uint64_t *size) {
    *fd = -1;
    *size = 0;
    const char *w = what ? what : "";
    int f = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    if (f < 0)
        return mxk_set_error(MXK_ERR_IO, "cannot open %s%s'%s': %s", w, sp(w), path,
                             strerror(errno));
    struct stat sb;
    mxk_status st = MXK_OK;
    if (fstat(f, &sb) != 0)
        st = mxk_set_error(MXK_ERR_IO, "cannot read %s%s'%s': %s", w, sp(w), path, strerror(errno));
    else if (!S_ISREG(sb.st_mode))
        st = mxk_set_error(MXK_ERR_IO, "cannot read %s%s'%s': it is %s, not a regular file", w,
                           sp(w), path, kind_name(sb.st_mode));
    else if ((uint64_t)sb.st_size > max_size)
        st = mxk_set_error(MXK_ERR_FORMAT,
                           "cannot read %s%s'%s': %lld bytes is more than the limit of %llu bytes",
                           w, sp(w), path, (long long)sb.st_size, (unsigned long long)max_size);
    else if (fcntl(f, F_SETFL, fcntl(f, F_GETFL) & ~O_NONBLOCK) != 0)
        st = mxk_set_error(MXK_ERR_IO, "cannot read %s%s'%s': %s", w, sp(w), path, strerror(errno));
    if (st != MXK_OK) {
        close(f);
        return st;
    }
    *fd = f;
    *size = (uint64_t)sb.st_size;
    return MXK_OK;
}

mxk_status mxki_file_read_exact(int fd, const char *path, const char *what, void *dst, size_t n) {
    const char *w = what ? what : "";
    uint8_t *p = dst;
    while (n > 0) {
        ssize_t k = read(fd, p, n);
        if (k < 0 && errno == EINTR)
            continue;
        if (k < 0)
            return mxk_set_error(MXK_ERR_IO, "cannot read %s%s'%s': %s", w, sp(w), path,
                                 strerror(errno));
        if (k == 0)
            return mxk_set_error(MXK_ERR_IO,
                                 "cannot read %s%s'%s': it ended early (the file shrank while it "
                                 "was read)",
                                 w, sp(w), path);
        p += k;
        n -= (size_t)k;
    }
    return MXK_OK;
}

mxk_status mxk_file_read(const char *path, const char *what, uint64_t max_size, char **data,
                         size_t *size) {
    if (path == NULL || data == NULL || size == NULL)
        return mxk_set_error(MXK_ERR_INVALID_ARGUMENT, "mxk_file_read: NULL argument");
    *data = NULL;
    *size = 0;
    int fd;
    uint64_t n;
    if (max_size > SIZE_MAX - 1)
        max_size = SIZE_MAX - 1;
    mxk_status st = mxki_file_open_read(path, what, max_size, &fd, &n);
    if (st != MXK_OK)
        return st;
    char *buf = malloc((size_t)n + 1);
    if (buf == NULL)
        st = mxk_set_error(MXK_ERR_OUT_OF_MEMORY, "cannot read '%s': out of memory for %llu bytes",
                           path, (unsigned long long)n);
    else
        st = mxki_file_read_exact(fd, path, what, buf, (size_t)n);
    close(fd);
    if (st != MXK_OK) {
        free(buf);
        return st;
    }
    buf[n] = '\0';
    *data = buf;
    *size = (size_t)n;
    return MXK_OK;
}
