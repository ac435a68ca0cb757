/*
 * mxk_recordio.h: reading and writing RecordIO files (.rec, and .idx indexes),
 * byte for byte as MXNet 1.9.1's python/mxnet/recordio.py (MXRecordIO,
 * MXIndexedRecordIO, pack, unpack) and dmlc-core's src/recordio.cc write them.
 * The format: plugins/io-recordio/README.md, section "RecordIO".
 *
 *     mxk_recordio *w;
 *     mxk_recordio_indexed_open("d.idx", "d.rec", "w", &w);
 *     mxk_recordio_write_idx(w, 0, buf, len);
 *     mxk_recordio_close(w);            // d.rec and d.idx appear here
 *
 * Errors go through the thread's last error (mxk_get_last_error, mxk.h); every
 * function returns MXK_OK or an error code. A handle is not thread-safe; distinct
 * handles may be used from distinct threads. Written files appear only at a
 * successful mxk_recordio_close (mxk_file_writer, mxk.h): an error or a
 * failed close leaves any earlier file of that name untouched.
 */
#ifndef MXK_RECORDIO_H
#define MXK_RECORDIO_H

#include <stddef.h>
#include <stdint.h>

#include "mxk.h"

#ifdef __cplusplus
extern "C" {
#endif

/** An open .rec file (with its .idx when opened by mxk_recordio_indexed_open). */
typedef struct mxk_recordio mxk_recordio;

/**
 * Opens `path` for reading (mode "r") or writing (mode "w"; the file appears at
 * close). Errors: MXK_ERR_INVALID_ARGUMENT "mxk_recordio_open: mode must be
 * \"r\" or \"w\"" (and for NULL arguments); MXK_ERR_IO "cannot open 'PATH':
 * <strerror>", "'PATH' is not a regular file"; the errors of
 * mxk_file_writer_open in mode "w".
 */
MXK_API mxk_status mxk_recordio_open(const char *path, const char *mode, mxk_recordio **out);

/**
 * Opens a .rec file with its index, as MXIndexedRecordIO: mode "r" reads the
 * `key<TAB>offset` lines of `idx_path` (keys are integers; a repeated key maps to
 * its last offset, as a Python dict does); mode "w" writes both files, which
 * appear at close. Errors: those of mxk_recordio_open; MXK_ERR_FORMAT
 * "'IDX':LINE: expected 'key<TAB>offset'", "'IDX':LINE: offset O is past the end
 * of 'REC' (S bytes)".
 */
MXK_API mxk_status mxk_recordio_indexed_open(const char *idx_path, const char *rec_path,
                                             const char *mode, mxk_recordio **out);

/**
 * Reads the next record. *buf points into the handle's buffer (valid until the
 * next read, seek or close of `h`; do not free it), *len is its size; at the end
 * of the file *buf is NULL and *len 0 (MXK_OK). Multi-part records come back
 * joined. Errors (MXK_ERR_FORMAT, naming the file and byte offset): "'PATH':
 * truncated record header at byte O (N of 8 bytes)", "'PATH': bad magic
 * 0xXXXXXXXX at byte O (expected 0xced7230a)", "'PATH': record at byte O has
 * length L but only R bytes follow", "'PATH': record part at byte O has cflag C,
 * expected 0 or 1 (not the start of a record)", "'PATH': record part at byte O
 * has cflag C inside a multi-part record, expected 2 or 3"; MXK_ERR_INVALID_ARGUMENT
 * "mxk_recordio_read: the handle is open for writing".
 */
MXK_API mxk_status mxk_recordio_read(mxk_recordio *h, const void **buf, size_t *len);

/**
 * Appends a record of `len` bytes (len < 2^29), split as dmlc's writer splits
 * payloads holding the magic word. Errors: MXK_ERR_INVALID_ARGUMENT "record of N
 * bytes is longer than RecordIO's limit of 536870911 bytes", "mxk_recordio_write:
 * the handle is open for reading"; MXK_ERR_IO from the file writer ("cannot write
 * 'PATH': <strerror>"), after which every write fails with "'PATH' not written: an
 * earlier write failed" and close fails the same way, writing nothing.
 */
MXK_API mxk_status mxk_recordio_write(mxk_recordio *h, const void *buf, size_t len);

/** Byte offset of the next record read or written into *pos. */
MXK_API mxk_status mxk_recordio_tell(mxk_recordio *h, uint64_t *pos);

/**
 * Moves a reader to byte offset `pos` (a record head, e.g. from tell or an
 * .idx). Errors: MXK_ERR_INVALID_ARGUMENT "cannot seek to byte P of 'PATH': past
 * its end (S bytes)", "mxk_recordio_seek: the handle is open for writing".
 */
MXK_API mxk_status mxk_recordio_seek(mxk_recordio *h, uint64_t pos);

/**
 * Limits a reader to part `part_index` of `num_parts`, aligned to record heads
 * as dmlc's InputSplit (src/io/input_split_base.cc, recordio_split.cc): the file
 * is cut into equal byte ranges and a part holds the records whose head lies in
 * its range, so the parts together hold every record exactly once. The reader
 * moves to the part's first record; later reads stop at its end (a seek does
 * not lift the limit). Errors: MXK_ERR_INVALID_ARGUMENT "num_parts must be at
 * least 1", "part_index P is not below num_parts N".
 */
MXK_API mxk_status mxk_recordio_set_part(mxk_recordio *h, uint32_t num_parts, uint32_t part_index);

/**
 * Writing: writes the rest, then renames the files into place (the .idx first);
 * reading: releases. Frees `h` in every case (NULL: no-op, MXK_OK). Errors: those
 * of mxk_file_writer_commit, or MXK_ERR_IO "'PATH' not written: an earlier write
 * failed".
 */
MXK_API mxk_status mxk_recordio_close(mxk_recordio *h);

/**
 * Indexed reader: seeks to the offset of `key` and reads that record (*buf as in
 * mxk_recordio_read). Errors: MXK_ERR_NOT_FOUND "key K is not in 'IDX'";
 * MXK_ERR_INVALID_ARGUMENT "mxk_recordio_read_idx: the handle has no index" (or
 * is open for writing); the errors of mxk_recordio_read, and MXK_ERR_FORMAT
 * "'IDX': key K points at byte O of 'REC', which is not the start of a record"
 * followed by the reader's message; MXK_ERR_FORMAT "'IDX': key K points at byte
 * O of 'REC', past its part's end" after mxk_recordio_set_part.
 */
MXK_API mxk_status mxk_recordio_read_idx(mxk_recordio *h, int64_t key, const void **buf,
                                         size_t *len);

/**
 * Indexed writer: writes the record and the line "KEY<TAB>OFFSET" of its offset
 * to the index (MXIndexedRecordIO.write_idx). Errors: those of mxk_recordio_write;
 * MXK_ERR_INVALID_ARGUMENT "mxk_recordio_write_idx: the handle has no index".
 */
MXK_API mxk_status mxk_recordio_write_idx(mxk_recordio *h, int64_t key, const void *buf,
                                          size_t len);

/**
 * The keys of an indexed handle in file (or write) order into *keys (owned by the
 * handle, valid until the next write_idx or close) and their count into *n.
 * Errors: MXK_ERR_INVALID_ARGUMENT "mxk_recordio_keys: the handle has no index".
 */
MXK_API mxk_status mxk_recordio_keys(mxk_recordio *h, const int64_t **keys, size_t *n);

/** MXNet's image record header IRHeader (python/mxnet/recordio.py, struct "IfQQ"). */
typedef struct mxk_irheader {
    uint32_t flag; /**< 0: the label is `label`; N > 0: N float32 labels follow the header */
    float label;   /**< the label when flag is 0 (MXNet's pack writes 0 with a label array) */
    uint64_t id;   /**< record id */
    uint64_t id2;  /**< second id */
} mxk_irheader;

/**
 * Packs a record as MXNet's pack: the 24-byte header, then header->flag float32
 * `labels` (NULL when flag is 0), then `len` bytes of `payload`. *out (free with
 * mxk_free) gets *out_len bytes. Errors: MXK_ERR_INVALID_ARGUMENT for NULL
 * arguments ("mxk_recordio_pack: labels is NULL but flag is F"); MXK_ERR_OUT_OF_MEMORY.
 */
MXK_API mxk_status mxk_recordio_pack(const mxk_irheader *header, const float *labels,
                                     const void *payload, size_t len, void **out, size_t *out_len);

/**
 * Unpacks a record as MXNet's unpack: the header into *header, and pointers into
 * `rec` (no copy): *labels to header->flag little-endian float32 values (NULL
 * when flag is 0; possibly unaligned: memcpy them out), *payload to the
 * remaining *payload_len bytes. Errors: MXK_ERR_FORMAT "record of N bytes is
 * shorter than the 24-byte IRHeader", "record of N bytes is too short for its F
 * labels".
 */
MXK_API mxk_status mxk_recordio_unpack(const void *rec, size_t len, mxk_irheader *header,
                                       const void **labels, const void **payload,
                                       size_t *payload_len);

/**
 * Packs an image record as MXNet's pack_img (python/mxnet/recordio.py): the
 * pixels encoded as `img_fmt` ".jpg"/".jpeg" or ".png" (either case), then
 * packed with mxk_recordio_pack (header, flag float32 `labels`). `pixels`:
 * height x width x channels bytes, interleaved HWC, rows packed, channels 1
 * (gray), 3 (RGB order: MXNet's cv2 arrays are BGR, the files are the same) or
 * 4 (RGBA, PNG only). `quality` as pack_img's: the JPEG quality or the PNG
 * compression level, clamped as OpenCV's cv::imencode clamps them (JPEG to
 * [1, 100], PNG to [0, 9]: pack_img's default 95 gives level 9 for ".png").
 * JPEG: libjpeg-turbo, 4:2:0 for colour, as OpenCV's default. *out (free with
 * mxk_free) gets *out_len bytes. Thread-safe. Errors: MXK_ERR_INVALID_ARGUMENT
 * for NULL arguments, "mxk_recordio_pack_img: unknown image format 'F' (.jpg or
 * .png)", "mxk_recordio_pack_img: cannot encode a C-channel image as JPEG" (or
 * PNG), "mxk_recordio_pack_img: cannot encode an image of W x H x C" (empty, or
 * over 2^31 - 1 bytes), and those of mxk_recordio_pack; MXK_ERR_OUT_OF_MEMORY.
 */
MXK_API mxk_status mxk_recordio_pack_img(const mxk_irheader *header, const float *labels,
                                         const uint8_t *pixels, uint32_t height, uint32_t width,
                                         uint32_t channels, const char *img_fmt, int quality,
                                         void **out, size_t *out_len);

/**
 * Unpacks an image record as MXNet's unpack_img: the header and labels as
 * mxk_recordio_unpack (*labels points into `rec`), and the payload decoded
 * (JPEG with libjpeg-turbo, PNG with libpng) into *pixels (HWC, RGB order,
 * free with mxk_free), *height, *width, *channels. iscolor as cv2.imdecode's
 * flag in unpack_img: -1 the file's own channels (1 gray, 3 colour, 4 with
 * alpha or tRNS), 0 gray (JPEG: its luma; PNG: 0.299 R + 0.587 G + 0.114 B),
 * 1 colour (3 channels, alpha dropped). 16-bit PNGs give their high byte
 * (OpenCV keeps 16 bits with -1). Thread-safe. Errors: MXK_ERR_INVALID_ARGUMENT
 * for NULL arguments, "mxk_recordio_unpack_img: iscolor I is not -1, 0 or 1";
 * the errors of mxk_recordio_unpack; MXK_ERR_FORMAT "record id ID: <decoder's
 * message>", e.g. "record id 7: corrupt JPEG: Premature end of JPEG file",
 * "record id 7: not a JPEG or PNG image (first bytes 47 49 46 38)", "record id
 * 7: image of W x H x C is too large" (over 2^31 - 1 bytes, refused before
 * decoding); MXK_ERR_OUT_OF_MEMORY.
 */
MXK_API mxk_status mxk_recordio_unpack_img(const void *rec, size_t len, int iscolor,
                                           mxk_irheader *header, const void **labels,
                                           uint8_t **pixels, uint32_t *height, uint32_t *width,
                                           uint32_t *channels);

#ifdef __cplusplus
}
#endif

#endif /* MXK_RECORDIO_H */
