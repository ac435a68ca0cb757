/*
 * Kernel-internal side of the file helpers (kernel/file_io.c; the public part is
 * the "Files" section of mxk.h: mxk_file_read, mxk_file_write, mxk_file_writer_*,
 * mxk_file_check_target).
 *
 * Readers that parse a file as they go (NDArray lists, kernel/ndarray_io.c) open
 * it with mxki_file_open_read and pull bytes with mxki_file_read_exact, so that
 * every size in a header is checked against the file's size before anything is
 * allocated. Tests replace the write call with mxki_file_io_set_write_hook to make
 * a write fail or stall half-way through (tests/files).
 */
#ifndef MXK_FILE_IO_H
#define MXK_FILE_IO_H

#include <stdint.h>
#include <sys/types.h>

#include "mxk.h"

/**
 * Opens `path` for reading without ever blocking: O_NONBLOCK for the open (a
 * FIFO would wait for a writer), then fstat, and only a regular file (or a
 * symlink to one) is kept; O_NONBLOCK is cleared again. On success *fd (owned by
 * the caller, close() it) and *size (bytes, from fstat) are set. `what` names the
 * kind of file in messages ("symbol file"; NULL: none). Errors:
 * MXK_ERR_IO "cannot open WHAT 'PATH': <strerror>" (ENOENT, EACCES, ELOOP, ...),
 * "cannot read WHAT 'PATH': it is a directory|a FIFO|a character device|a block
 * device|a socket, not a regular file"; MXK_ERR_FORMAT "cannot read WHAT 'PATH':
 * N bytes is more than the limit of M bytes" when the file exceeds `max_size`.
 * Thread-safe.
 */
mxk_status mxki_file_open_read(const char *path, const char *what, uint64_t max_size, int *fd,
                               uint64_t *size);

/**
 * Reads exactly `n` bytes from `fd` into `dst`, retrying on EINTR and short
 * reads. Errors (MXK_ERR_IO): "cannot read WHAT 'PATH': <strerror>", or
 * "cannot read WHAT 'PATH': it ended early (the file shrank while it was read)"
 * at end of file. `path` and `what` only name the file in messages. Thread-safe.
 */
mxk_status mxki_file_read_exact(int fd, const char *path, const char *what, void *dst, size_t n);

/** The write(2) the atomic writer calls; tests substitute one that fails or stalls. */
typedef ssize_t (*mxk_file_write_fn)(int fd, const void *buf, size_t n);

/**
 * Replaces the write call of every mxk_file_writer (NULL restores write(2)). For
 * tests only: not synchronised with writes in progress, so set it while no file
 * is being written. Not exported from libmxk.
 */
__attribute__((visibility("hidden"))) void mxki_file_io_set_write_hook(mxk_file_write_fn fn);

#endif /* MXK_FILE_IO_H */
