/*
 * Host-side element conversion between the seven mxk dtypes (kernel-internal).
 *
 * Used by NDArray copy_to when the dtypes differ (the conversion always runs on
 * the host; device data is bounced through host buffers) and as the host fill of
 * arrays whose backend has no fill function.
 *
 * Semantics follow C++ static_cast as mshadow applies it (upstream
 * mshadow/base.h, mshadow/half.h), with the cases C leaves undefined made defined:
 * - float -> integer truncates toward zero; NaN gives 0 and values beyond the
 *   target's range saturate to its minimum / maximum (static_cast is undefined
 *   there; x86 would give INT_MIN).
 * - integer -> narrower integer wraps modulo 2^bits (two's complement), as GCC
 *   and Clang define the implementation-defined conversion.
 * - anything -> float16 converts to float32 first, then rounds to nearest even
 *   (mshadow's half_t(double) also goes through float); overflow gives +-inf,
 *   NaN stays NaN (quiet).
 * - float64 -> float32 rounds to nearest even; beyond the float range gives +-inf.
 *
 * Threading: all functions are pure and thread-safe. Errors: none beyond an
 * unknown dtype code, reported by the return value (no last error is set, so
 * these functions may run inside engine functions).
 */
#ifndef MXK_DTYPE_CONVERT_H
#define MXK_DTYPE_CONVERT_H

#include <stdbool.h>
#include <stdint.h>

/** IEEE 754 binary32 -> binary16, round to nearest even (bits of the half returned). */
uint16_t mxki_float_to_half(float f);

/** IEEE 754 binary16 (bits) -> binary32; exact. */
float mxki_half_to_float(uint16_t h);

/**
 * Converts `count` elements at `src` (dtype src_dtype) into `dst` (dtype dst_dtype),
 * both host memory, not overlapping unless the dtypes are equal (then it is a
 * memmove). Returns false (and writes nothing) when a dtype code is unknown.
 */
bool mxki_dtype_convert(void *dst, int32_t dst_dtype, const void *src, int32_t src_dtype,
                        uint64_t count);

/**
 * Sets `count` elements of `dtype` at host memory `dst` to `value`, converted as a
 * float64 element would be by mxki_dtype_convert. Returns false for an unknown dtype.
 */
bool mxki_dtype_fill_host(void *dst, int32_t dtype, uint64_t count, double value);

#endif /* MXK_DTYPE_CONVERT_H */
