"""MXNet 1.9.1's ImageRecordIter, the peer of bench_imagerec's iter mode.

usage: imagerec_mxnet.py REC C,H,W THREADS AUG

Batches of 128, the same normalisation, AUG 1: rand_crop + rand_mirror; the
second epoch timed. Prints the same JSON line as bench_imagerec.
"""
import json
import resource
import sys
import time

import mxnet as mx


def main():
    rec, shape, threads, aug = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4] == "1"
    dims = tuple(int(x) for x in shape.split(","))
    color = dims[0] == 3
    it = mx.io.ImageRecordIter(
        path_imgrec=rec, data_shape=dims, batch_size=128, preprocess_threads=threads,
        rand_crop=aug, rand_mirror=aug, mean_r=123.68, mean_g=116.779 if color else 0,
        mean_b=103.939 if color else 0, std_r=58.393, std_g=57.12 if color else 1,
        std_b=57.375 if color else 1, prefetch_buffer=4, round_batch=False)
    for _ in range(2):
        it.reset()
        t0 = time.perf_counter()
        images = 0
        for batch in it:
            batch.data[0].wait_to_read()
            images += batch.data[0].shape[0] - batch.pad
        secs = time.perf_counter() - t0
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
    print(json.dumps({"mode": "mxnet", "threads": threads, "images": images,
                      "seconds": round(secs, 3), "images_per_sec": round(images / secs, 1),
                      "peak_rss_mb": round(rss, 1)}))


if __name__ == "__main__":
    main()
