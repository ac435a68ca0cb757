/*
 * The augmenters of upstream's DefaultImageAugmenter that need no MXNet run to
 * check (plugins/io-recordio/image_aug.h): the HLS conversions of random_h/s/l
 * against OpenCV's cv::cvtColor (COLOR_RGB2HLS / COLOR_HLS2RGB on uint8; the
 * reference values below were computed with OpenCV 4.8 in the MXNet 1.9.1 venv),
 * hue jitter leaving gray pixels alone, the min/max_crop_size crop (exact pixels
 * and its error), and a shear warp of a constant image filled with the same
 * value staying that value.
 */
#include <stdio.h>
#include <string.h>

#include "image_aug.h"
#include "testing.h"

/** RGB pixels and OpenCV's RGB2HLS of each. */
static const uint8_t k_rgb[][3] = {
    {0, 0, 0},       {255, 255, 255}, {255, 0, 0},    {0, 255, 0},    {0, 0, 255},
    {128, 128, 128}, {255, 255, 0},   {0, 255, 255},  {255, 0, 255},  {12, 200, 90},
    {250, 3, 251},   {1, 2, 3},       {200, 100, 50}, {50, 100, 200}, {129, 127, 128},
    {77, 77, 78},    {175, 196, 25},  {246, 67, 211}, {151, 103, 92}, {185, 142, 23},
    {72, 89, 110},   {42, 218, 136},  {167, 230, 68}, {176, 127, 135}};
static const uint8_t k_hls[][3] = {
    {0, 0, 0},       {0, 255, 0},    {0, 128, 255},   {60, 128, 255},  {120, 128, 255},
    {0, 128, 0},     {30, 128, 255}, {90, 128, 255},  {150, 128, 255}, {72, 106, 226},
    {150, 127, 249}, {105, 2, 128},  {10, 125, 153},  {110, 125, 153}, {165, 128, 2},
    {120, 78, 2},    {34, 111, 197}, {156, 157, 232}, {6, 122, 62},    {22, 104, 199},
    {107, 91, 53},   {76, 130, 180}, {42, 149, 195},  {175, 152, 60}};

/** HLS triples (H up to 180, as the jitter's clamp allows) and OpenCV's HLS2RGB of each. */
static const uint8_t k_hls_in[][3] = {
    {0, 0, 0},     {180, 128, 255}, {179, 128, 255}, {90, 200, 100},  {30, 255, 255},
    {60, 0, 255},  {120, 128, 128}, {45, 64, 32},    {150, 190, 250}, {15, 100, 0},
    {56, 87, 144}, {152, 227, 118}, {112, 195, 159}, {34, 72, 93},    {56, 83, 172},
    {38, 176, 92}, {4, 1, 252},     {137, 192, 71}};
static const uint8_t k_rgb_out[][3] = {
    {0, 0, 0},       {255, 1, 1},     {255, 1, 9},     {178, 222, 222}, {255, 255, 255},
    {0, 0, 0},       {64, 64, 192},   {64, 72, 56},    {254, 126, 254}, {100, 100, 100},
    {51, 136, 38},   {240, 214, 238}, {158, 178, 232}, {91, 98, 46},    {42, 139, 27},
    {189, 205, 147}, {2, 0, 0},       {194, 174, 210}};

static void test_hls_matches_opencv(void) {
    for (size_t i = 0; i < sizeof k_rgb / sizeof k_rgb[0]; i++) {
        uint8_t hls[3];
        aug_rgb_to_hls(k_rgb[i], hls);
        CHECK(memcmp(hls, k_hls[i], 3) == 0);
    }
    for (size_t i = 0; i < sizeof k_hls_in / sizeof k_hls_in[0]; i++) {
        uint8_t rgb[3];
        aug_hls_to_rgb(k_hls_in[i], rgb);
        CHECK(memcmp(rgb, k_rgb_out[i], 3) == 0);
    }
}

/** Default parameters for a c x h x w float output without normalisation. */
static aug_params params(uint32_t c, uint32_t h, uint32_t w) {
    aug_params p;
    memset(&p, 0, sizeof p);
    p.c = c;
    p.h = h;
    p.w = w;
    p.resize = -1;
    p.min_random_scale = p.max_random_scale = 1;
    p.min_random_area = p.max_random_area = 1;
    p.inter_method = 1;
    p.fill_value = 255;
    p.min_crop_size = p.max_crop_size = -1;
    for (int k = 0; k < 4; k++)
        p.std[k] = 1;
    p.scale = 1;
    return p;
}

/** Gray pixels (R = G = B) have no hue: any random_h leaves them exactly as they are. */
static void test_hue_jitter_keeps_gray(void) {
    uint8_t pix[4 * 3 * 3];
    for (int i = 0; i < 4 * 3; i++)
        pix[3 * i] = pix[3 * i + 1] = pix[3 * i + 2] = (uint8_t)(i * 20 + 3);
    img_image im = {pix, 4, 3, 3};
    aug_params p = params(3, 3, 4);
    p.random_h = 90;
    float out[3 * 3 * 4];
    char msg[256];
    for (uint64_t pos = 0; pos < 8; pos++) {
        aug_rng rng;
        aug_rng_seed(&rng, 1, 0, pos);
        CHECK(aug_process(&p, &im, 4, 3, &rng, out, msg, sizeof msg) == 0);
        for (int k = 0; k < 3; k++)
            for (int i = 0; i < 12; i++)
                CHECK(out[k * 12 + i] == (float)(i * 20 + 3));
    }
}

/** min_crop_size = max_crop_size = the output side: the centred square, pixel for pixel. */
static void test_crop_size(void) {
    uint8_t pix[8 * 6];
    for (int i = 0; i < 8 * 6; i++)
        pix[i] = (uint8_t)i;
    img_image im = {pix, 8, 6, 1};
    aug_params p = params(1, 4, 4);
    p.min_crop_size = p.max_crop_size = 4;
    float out[16];
    char msg[256];
    aug_rng rng;
    aug_rng_seed(&rng, 0, 0, 0);
    CHECK(aug_process(&p, &im, 8, 6, &rng, out, msg, sizeof msg) == 0);
    for (int y = 0; y < 4; y++) /* centred: x0 = (8 - 4) / 2, y0 = (6 - 4) / 2 */
        for (int x = 0; x < 4; x++)
            CHECK(out[y * 4 + x] == (float)((y + 1) * 8 + x + 2));
    p.min_crop_size = 2;
    p.max_crop_size = 7;
    CHECK(aug_process(&p, &im, 8, 6, &rng, out, msg, sizeof msg) == -1);
    CHECK(strcmp(msg, "image of 8 x 6 is smaller than max_crop_size 7") == 0);
}

/** A shear (with rotation and scale) of a constant image bordered by the same value. */
static void test_shear_constant(void) {
    uint8_t pix[10 * 10];
    memset(pix, 200, sizeof pix);
    img_image im = {pix, 10, 10, 1};
    aug_params p = params(1, 6, 6);
    p.max_shear_ratio = 0.5f;
    p.max_rotate_angle = 30;
    p.fill_value = 200;
    float out[36];
    char msg[256];
    for (uint64_t pos = 0; pos < 8; pos++) {
        aug_rng rng;
        aug_rng_seed(&rng, 3, 0, pos);
        CHECK(aug_process(&p, &im, 10, 10, &rng, out, msg, sizeof msg) == 0);
        for (int i = 0; i < 36; i++)
            CHECK(out[i] == 200.0f);
    }
}

int main(void) {
    MXK_RUN(test_hls_matches_opencv);
    MXK_RUN(test_hue_jitter_keeps_gray);
    MXK_RUN(test_crop_size);
    MXK_RUN(test_shear_constant);
    return MXK_TEST_EXIT();
}
