/*
 * RecordIO, dmlc-core's record format (dmlc-core include/dmlc/recordio.h and
 * src/recordio.cc, used by MXNet's python/mxnet/recordio.py): the reader, the
 * writer's encoding, partitioning as dmlc's RecordIOSplitter does, and the image
 * record header (IRHeader) of MXNet's pack/unpack. No kernel dependencies: the
 * io-recordio plugin and libmxk (kernel/io/recordio_api.c) both compile it.
 *
 * Format: each record part is the magic word 0xced7230a, then the word
 * lrecord = cflag << 29 | length (little-endian), then `length` bytes, then zero
 * padding to a multiple of 4. A payload holding the magic word at a 4-byte
 * aligned position is split there (the magic itself is dropped): parts with cflag
 * 1 (first), 2 (middle), 3 (last); cflag 0 is a whole record.
 *
 * Errors: functions returning int give 0 on success and -1 on error with a
 * message that names the file and byte offset written into the caller's buffer
 * (msg, cap; always NUL-terminated when cap > 0). Not thread-safe per reader.
 */
#ifndef MXK_IO_RECORDIO_H
#define MXK_IO_RECORDIO_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/** The word every record part starts with. */
#define RIO_MAGIC 0xced7230aU
/** The longest record part (the length field has 29 bits). */
#define RIO_MAX_LEN ((1U << 29) - 1)
/** Size of the packed IRHeader (flag uint32, label float32, id uint64, id2 uint64). */
#define RIO_IRHEADER_SIZE 24

/** A reader of one .rec file. */
typedef struct rio_reader rio_reader;

/**
 * Opens `path` for reading. Errors: "cannot open 'PATH': <strerror>", "'PATH' is
 * not a regular file". *out is owned by the caller (rio_reader_close).
 */
int rio_reader_open(const char *path, rio_reader **out, char *msg, size_t cap);

/** Closes and frees a reader (NULL: no-op). */
void rio_reader_close(rio_reader *r);

/** Size of the file in bytes (at open). */
uint64_t rio_reader_size(const rio_reader *r);

/** Byte offset of the next record to read. */
uint64_t rio_reader_tell(const rio_reader *r);

/**
 * Moves to byte offset `pos` (the next read expects a record head there).
 * Error: "cannot seek to byte P of 'PATH': past its end (S bytes)".
 */
int rio_reader_seek(rio_reader *r, uint64_t pos, char *msg, size_t cap);

/**
 * Limits reading to records whose head lies before byte `end` (a partition's
 * end, rio_part_range); UINT64_MAX: the whole file (the default).
 */
void rio_reader_set_end(rio_reader *r, uint64_t end);

/**
 * Reads the next record, joining multi-part records as dmlc's
 * RecordIOReader::NextRecord does. Returns 1 and sets *data (owned by the reader,
 * valid until the next read, seek or close) and *len; 0 at the end (of the file
 * or of the range); -1 on error: "'PATH': truncated record header at byte O (N
 * of 8 bytes)", "'PATH': bad magic 0xXXXXXXXX at byte O (expected 0xced7230a)",
 * "'PATH': record at byte O has length L but only R bytes follow", "'PATH':
 * record part at byte O has cflag C, expected 0 or 1 (not the start of a
 * record)", "'PATH': record part at byte O has cflag C inside a multi-part
 * record, expected 2 or 3", "out of memory".
 */
int rio_reader_next(rio_reader *r, const uint8_t **data, size_t *len, char *msg, size_t cap);

/**
 * The byte range [*begin, *end) of part `part_index` of `num_parts` of the
 * reader's file, as dmlc's InputSplitBase::ResetPartition with
 * RecordIOSplitter::SeekRecordBegin computes it: the file is cut into equal
 * steps (rounded up to a multiple of 4) and each cut is moved forward to the
 * next record head (a magic word followed by cflag 0 or 1). Every record belongs
 * to exactly one part. Errors: "num_parts must be at least 1", "part_index P is
 * not below num_parts N", and read errors. Leaves the reader's position at *begin.
 */
int rio_part_range(rio_reader *r, uint32_t num_parts, uint32_t part_index, uint64_t *begin,
                   uint64_t *end, char *msg, size_t cap);

/** Sink of the writer's bytes: returns 0, or -1 after recording its own error. */
typedef int (*rio_write_fn)(void *ctx, const void *data, size_t n);

/**
 * Encodes one record of `len` bytes exactly as dmlc's RecordIOWriter::WriteRecord
 * (splitting at aligned magic words, zero padding) and passes the bytes to
 * `write`; *written (optional) gets the encoded size. Errors: "record of N bytes
 * is longer than RecordIO's limit of 536870911 bytes", or -1 from `write` (msg
 * then left empty: the sink has its own error).
 */
int rio_write_record(rio_write_fn write, void *ctx, const void *data, size_t len, uint64_t *written,
                     char *msg, size_t cap);

/** MXNet's IRHeader (python/mxnet/recordio.py), as packed with struct format "IfQQ". */
typedef struct rio_irheader {
    uint32_t flag; /**< 0: one label in `label`; N > 0: N float32 labels follow */
    float label;   /**< the label when flag is 0 */
    uint64_t id;   /**< record id */
    uint64_t id2;  /**< second id */
} rio_irheader;

/** Writes the 24 header bytes (little-endian) to `out`. */
void rio_irheader_put(const rio_irheader *h, uint8_t *out);

/**
 * Splits a record into its IRHeader, its labels (h->flag float32 values at
 * *labels, or none; possibly unaligned) and its payload, as MXNet's unpack.
 * Errors: "record of N bytes is shorter than the 24-byte IRHeader", "record of
 * N bytes is too short for its F labels".
 */
int rio_irheader_get(const uint8_t *rec, size_t len, rio_irheader *h, const uint8_t **labels,
                     const uint8_t **payload, size_t *payload_len, char *msg, size_t cap);

#endif /* MXK_IO_RECORDIO_H */
