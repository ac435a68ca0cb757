/*
 * Opening a data file of the io-recordio iterators (MNISTIter's IDX files,
 * CSVIter's CSV files) so that a bad path is a clear error, never a hang: a FIFO
 * or a character device named as a data file would block open() (a FIFO without a
 * writer) or read() forever (/dev/zero, a terminal). Upstream MXNet opens them
 * with dmlc::Stream (src/io/iter_mnist.cc, src/io/iter_csv.cc) and has no such
 * check. Header-only so that every user (the plugin and the IDX fuzz target,
 * which compiles idx.c alone) gets the one definition.
 */
#ifndef MXK_IO_FILE_H
#define MXK_IO_FILE_H

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/**
 * Opens `path` read-only for an iterator: non-blocking (O_NONBLOCK, so a FIFO
 * without a writer does not block), then fstat; anything that is not a regular
 * file (a symlink is followed to its target) is refused, and the descriptor is
 * switched back to blocking reads. On success returns the descriptor (the caller
 * closes it, or hands it to fdopen / gzdopen) and the file's size in bytes in
 * *size (when size is not NULL). On failure returns -1 with a message in msg (msgsize bytes),
 * `what` naming the role of the file: "WHAT: cannot open 'PATH': <strerror>" (e.g. "Permission
 * denied", "No such file or directory"), "WHAT: 'PATH' is not a regular file (a FIFO | a character
 * device | a block device | a directory | a socket | of type 0NNNNNN)", or "WHAT: cannot read
 * 'PATH': <strerror>" when fstat or fcntl fails. Thread-safe.
 */
static inline int io_open_regular(const char *path, const char *what, uint64_t *size, char *msg,
                                  size_t msgsize) {
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        snprintf(msg, msgsize, "%s: cannot open '%s': %s", what, path, strerror(errno));
        return -1;
    }
    struct stat st;
    if (fstat(fd, &st) != 0) {
        snprintf(msg, msgsize, "%s: cannot read '%s': %s", what, path, strerror(errno));
        close(fd);
        return -1;
    }
    if (!S_ISREG(st.st_mode)) {
        const char *kind = S_ISFIFO(st.st_mode)   ? "a FIFO"
                           : S_ISCHR(st.st_mode)  ? "a character device"
                           : S_ISBLK(st.st_mode)  ? "a block device"
                           : S_ISDIR(st.st_mode)  ? "a directory"
                           : S_ISSOCK(st.st_mode) ? "a socket"
                                                  : NULL;
        if (kind)
            snprintf(msg, msgsize, "%s: '%s' is not a regular file (%s)", what, path, kind);
        else
            snprintf(msg, msgsize, "%s: '%s' is not a regular file (of type 0%o)", what, path,
                     (unsigned)(st.st_mode & S_IFMT));
        close(fd);
        return -1;
    }
    int fl = fcntl(fd, F_GETFL);
    if (fl < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) != 0) {
        snprintf(msg, msgsize, "%s: cannot read '%s': %s", what, path, strerror(errno));
        close(fd);
        return -1;
    }
    if (size)
        *size = (uint64_t)st.st_size;
    return fd;
}

#endif /* MXK_IO_FILE_H */
