/*
 * stb_image_resize's implementation (the header of Debian's libstb-dev, v0.97),
 * compiled here for img_resize (image.c) rather than linked from libstb.so:
 * Debian builds that library with assert() on, and v0.97 asserts that each
 * output pixel's filter weights sum to within 10% of 1 before it normalises
 * them to 1 anyway; common ratios miss that (a triangle filter from 7 to 5
 * or from 300 to 224 pixels sums to more than 1.1), which would abort the
 * process. Here the asserts are off and the normalisation does its job.
 */
#define STB_IMAGE_RESIZE_IMPLEMENTATION
#define STBIR_ASSERT(x) ((void)0)
#include <stb_image_resize.h>
