/*
 * The libFuzzer entry point of a target whose whole work is `fn(data, size)` (its
 * result, if any, is ignored: a target reports a finding by aborting).
 */
#ifndef MXK_FUZZ_TARGET_H
#define MXK_FUZZ_TARGET_H

#include <stddef.h>
#include <stdint.h>

/** Defines LLVMFuzzerTestOneInput as a call of fn(data, size). */
#define MXK_FUZZ_TARGET(fn)                                                                        \
    int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);                                  \
    int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {                                 \
        (void)fn(data, size);                                                                      \
        return 0;                                                                                  \
    }

#endif /* MXK_FUZZ_TARGET_H */
