/*
 * ImageRecordIter's mean image file: one float32 array of shape (C, H, W) in
 * MXNet's NDArray list format (src/ndarray/ndarray.cc NDArray::Save / Load, as
 * mx.nd.save writes it and upstream's CreateMeanImg in
 * src/io/iter_image_recordio_2.cc saves it under the key "mean_img"):
 *
 *   uint64 0x112 | uint64 0 | uint64 1 | uint32 0xF993FAC9 (V2; V3 0xF993FACA is
 *   read too) | int32 0 (dense) | int32 3 | int64 C, H, W | int32 dev_type,
 *   dev_id | int32 0 (float32) | C*H*W float32 | uint64 1 | uint64 8 "mean_img"
 *
 * All little-endian. The kernel has a general reader (kernel/ndarray/ndarray_io.c)
 * that a plugin cannot reach; this one reads only the single dense float32
 * array a mean image is. Errors: -1 with a message naming the file in msg.
 * Reentrant.
 */
#ifndef MXK_IO_IMAGE_MEAN_H
#define MXK_IO_IMAGE_MEAN_H

#include <stddef.h>
#include <stdint.h>

/**
 * Reads the mean image at `path` into *out (malloc'd, c*h*w floats, CHW),
 * which must have shape (c, h, w). *exists is 0 (and -1 is not returned) when
 * the file does not exist. Errors: io_open_regular's ("mean_img: cannot open
 * 'F': <strerror>", "mean_img: 'F' is not a regular file (a FIFO)", ...),
 * "mean_img 'F': not an NDArray file holding one dense float32 array", "mean_img
 * 'F' has shape (a, b, d), expected (c, h, w)", "mean_img 'F': truncated",
 * "out of memory".
 */
int mean_img_read(const char *path, uint32_t c, uint32_t h, uint32_t w, float **out, int *exists,
                  char *msg, size_t cap);

/**
 * Writes `mean` (c*h*w floats, CHW) to `path` in the format above (through
 * PATH.tmp renamed into place). Errors: "mean_img 'F': cannot write: <strerror>".
 */
int mean_img_write(const char *path, uint32_t c, uint32_t h, uint32_t w, const float *mean,
                   char *msg, size_t cap);

#endif /* MXK_IO_IMAGE_MEAN_H */
