/*
 * What ImageRecordIter reads before its first batch: the byte offsets of the
 * records of its partition (from the .idx file or a scan of the .rec) and the
 * labels of an image list (.lst). Upstream: dmlc-core's InputSplit
 * (src/io/indexed_recordio_split.cc with an index, src/io/recordio_split.cc
 * without) and MXNet's ImageLabelMap (src/io/image_iter_common.h).
 * Errors: -1 with a message naming the file (and line or byte offset) in msg
 * (cap bytes). Reentrant.
 */
#ifndef MXK_IO_IMAGE_INDEX_H
#define MXK_IO_IMAGE_INDEX_H

#include <stddef.h>
#include <stdint.h>

#include "recordio.h"

/**
 * The offsets (*off, malloc'd, ascending; *n of them) of the records of part
 * `part_index` of `num_parts` of the reader's file.
 * With `idx_path` (not NULL or ""): the offsets of its `key<TAB>offset` lines,
 * sorted, the part being entries [k*s, min((k+1)*s, n)) with s = ceil(n /
 * num_parts), as dmlc's IndexedRecordIOSplitter::ResetPartition; errors
 * io_open_regular's ("path_imgidx: cannot open 'IDX': <strerror>", "...is not a
 * regular file (a FIFO)"), "'IDX':L: expected 'key<TAB>offset'",
 * "'IDX':L: offset O is not a multiple of 4 or lies past the end of 'REC' (S bytes)".
 * Without: rio_part_range's byte range (dmlc's RecordIOSplitter), scanned
 * record by record (reading the partition once); rio_reader's errors.
 */
int rec_offsets(rio_reader *r, const char *rec_path, const char *idx_path, uint32_t num_parts,
                uint32_t part_index, uint64_t **off, uint64_t *n, char *msg, size_t cap);

/** Labels of an image list, sorted by image index. */
typedef struct img_labels {
    uint64_t n;
    uint32_t width; /**< labels per image */
    uint64_t *ids;  /**< n image indices, ascending */
    float *labels;  /**< n * width labels, in the order of ids */
} img_labels;

/**
 * Reads an image list: lines `index<TAB>label_1 ... label_width<TAB>path` (the
 * .lst of tools/im2rec.py; blank lines skipped). As upstream's ImageLabelMap,
 * the first `width` numbers after the index are the labels and the rest of the
 * line is ignored. Errors: io_open_regular's ("path_imglist: cannot open 'LST':
 * <strerror>", ...), "'LST':L: expected an image index and W labels". A
 * repeated index keeps its last line.
 */
int img_labels_read(const char *path, uint32_t width, img_labels *out, char *msg, size_t cap);

/** The `width` labels of image `id`, or NULL when the list has none. */
const float *img_labels_find(const img_labels *l, uint64_t id);

/** Frees the arrays of `l` and zeroes it. */
void img_labels_free(img_labels *l);

#endif /* MXK_IO_IMAGE_INDEX_H */
