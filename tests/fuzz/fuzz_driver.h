/*
 * The standalone driver shared by the fuzz targets (built with MXK_FUZZ_STANDALONE;
 * a target includes this header only there). A target describes itself in a
 * fuzz_target: how it runs one input, which byte replacements it tries at every
 * position of a seed and how it mutates a seed at random. fuzz_main then
 *
 * - runs the files and directories named in argv,
 * - runs every seed, every truncation of it, every single-byte replacement and
 *   `random_runs` fixed-seed random mutations,
 *
 * or, with `--write-seeds DIR`, only writes the seeds into DIR (a libFuzzer seed
 * corpus; the fuzz build writes them into fuzz-seeds/NAME after linking a driver),
 *
 * and prints one line per seed. Nothing here knows the format under test.
 */
#ifndef MXK_FUZZ_DRIVER_H
#define MXK_FUZZ_DRIVER_H

#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/** Runs one input of n bytes (the target copies it as it needs). */
typedef void (*fuzz_input_fn)(const uint8_t *p, size_t n);

/** A seed: malloc'd bytes and a label (the file name of `--write-seeds`). */
typedef struct fuzz_seed {
    uint8_t *p;
    size_t n;
    const char *label;
} fuzz_seed;

/** What a target gives the driver. */
typedef struct fuzz_target {
    /** Runs one input. */
    fuzz_input_fn run;
    /** File name ending of written seeds (".params", ".json", ...). */
    const char *seed_ext;
    /** How many replacements are tried at every position of a seed. */
    int per_byte;
    /** The r-th replacement for byte `orig` at position `at`; one equal to orig is skipped. */
    uint8_t (*replace)(size_t at, int r, uint8_t orig);
    /** How many random mutations of each seed are run. */
    int random_runs;
    /** How many bytes longer than its seed a random mutation may grow. */
    size_t slack;
    /**
     * Mutates m (a copy of the seed: len bytes, room for cap) at random with *rng;
     * returns the new length (at most cap). NULL: fuzz_mutate_tokens with `tokens`.
     */
    size_t (*mutate)(uint8_t *m, size_t len, size_t cap, uint64_t *rng);
    /** Without `mutate`: the NULL-terminated tokens of the format. */
    const char *const *tokens;
    /** Without `mutate`: leading bytes (control bytes) that mutations leave alone. */
    size_t keep;
    /** The random generator's initial state. */
    uint64_t rng_init;
    /** Nonzero: every seed starts the generator afresh at rng_init + its index. */
    int rng_per_seed;
} fuzz_target;

/** Inputs run so far (through fuzz_run_input). */
static unsigned long fuzz_n_inputs;

/** Runs one input through the target on an exact-size heap copy (so ASan sees over-reads). */
static void fuzz_run_input(const fuzz_target *t, const uint8_t *p, size_t n) {
    uint8_t *copy = malloc(n ? n : 1);
    if (n)
        memcpy(copy, p, n);
    fuzz_n_inputs++;
    t->run(copy, n);
    free(copy);
}

/** Next value of a xorshift64 generator. */
static uint64_t fuzz_next_rand(uint64_t *s) {
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

/**
 * A random mutation of a binary input behind one control byte: 1-4 random
 * bytes after the first set at random, then 0-5 bytes cut from the end
 * (keeping at least 1). Returns the new length.
 */
static inline size_t fuzz_mutate_after_control(uint8_t *m, size_t len, size_t cap, uint64_t *rng) {
    (void)cap;
    int k = 1 + (int)(*rng % 4);
    for (int j = 0; j < k && len > 1; j++) {
        uint64_t x = fuzz_next_rand(rng);
        m[1 + x % (len - 1)] = (uint8_t)(x >> 32);
    }
    size_t cut = (size_t)((*rng >> 40) % 6);
    return cut < len ? len - cut : 1;
}

/**
 * A random mutation of a text format: 1-3 edits, each overwriting bytes with a
 * token, inserting a token or deleting a byte, at a position at or after `keep`.
 * Returns the new length (at most cap).
 */
static size_t fuzz_mutate_tokens(uint8_t *m, size_t len, size_t cap, uint64_t *rng,
                                 const char *const *tokens, size_t keep) {
    size_t ntok = 0;
    while (tokens[ntok] != NULL)
        ntok++;
    int edits = 1 + (int)(fuzz_next_rand(rng) % 3);
    for (int e = 0; e < edits && len > keep; e++) {
        uint64_t x = fuzz_next_rand(rng);
        size_t at = keep + (size_t)((x >> 8) % (len - keep));
        const char *tok = tokens[(x >> 40) % ntok];
        size_t tl = strlen(tok);
        if (x % 3 == 0 && at + tl <= len) {
            memcpy(m + at, tok, tl);
        } else if (x % 3 == 1) {
            memmove(m + at, m + at + 1, len - at - 1);
            len--;
        } else if (len + tl <= cap) {
            memmove(m + at + tl, m + at, len - at);
            memcpy(m + at, tok, tl);
            len += tl;
        }
    }
    return len;
}

/** Reads a whole file into a malloc'd buffer of *n bytes plus a NUL; NULL on failure. */
static uint8_t *fuzz_read_file(const char *path, size_t *n) {
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return NULL;
    size_t cap = 4096, len = 0, got;
    uint8_t *buf = malloc(cap);
    while (buf != NULL && (got = fread(buf + len, 1, cap - len - 1, f)) > 0) {
        len += got;
        if (len + 1 == cap) {
            uint8_t *q = realloc(buf, cap * 2);
            if (q == NULL) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = q;
            cap *= 2;
        }
    }
    fclose(f);
    if (buf != NULL) {
        buf[len] = '\0';
        *n = len;
    }
    return buf;
}

/** Writes n bytes to a file; 0 on success. */
static int fuzz_write_file(const char *path, const void *p, size_t n) {
    FILE *f = fopen(path, "wb");
    if (f == NULL)
        return -1;
    size_t w = n ? fwrite(p, 1, n, f) : 0;
    return (fclose(f) == 0 && w == n) ? 0 : -1;
}

/** Runs one file, or every file of a directory (recursively); 1 when one cannot be read. */
static int fuzz_run_path(const fuzz_target *t, const char *path) {
    struct stat sb;
    if (stat(path, &sb) != 0) {
        perror(path);
        return 1;
    }
    if (S_ISDIR(sb.st_mode)) {
        DIR *d = opendir(path);
        if (d == NULL) {
            perror(path);
            return 1;
        }
        struct dirent *e;
        int rc = 0;
        while ((e = readdir(d)) != NULL) {
            if (e->d_name[0] == '.')
                continue;
            char sub[4096];
            snprintf(sub, sizeof sub, "%s/%s", path, e->d_name);
            rc |= fuzz_run_path(t, sub);
        }
        closedir(d);
        return rc;
    }
    size_t n = 0;
    uint8_t *p = fuzz_read_file(path, &n);
    if (p == NULL) {
        perror(path);
        return 1;
    }
    fuzz_run_input(t, p, n);
    free(p);
    return 0;
}

/** Writes the seeds into dir as seed-<label><ext>; 1 when one cannot be written. */
static int fuzz_write_seeds(const fuzz_target *t, const char *dir, const fuzz_seed *seeds,
                            int nseeds) {
    int rc = 0;
    mkdir(dir, 0777);
    for (int k = 0; k < nseeds; k++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/seed-%s%s", dir, seeds[k].label, t->seed_ext);
        if (fuzz_write_file(path, seeds[k].p, seeds[k].n) != 0) {
            perror(path);
            rc = 1;
        }
    }
    return rc;
}

/** Runs a seed, its truncations, its single-byte replacements and its random mutations. */
static void fuzz_mutate_all(const fuzz_target *t, const fuzz_seed *s, uint64_t *rng) {
    fuzz_run_input(t, s->p, s->n);
    for (size_t len = 0; len < s->n; len++)
        fuzz_run_input(t, s->p, len);
    size_t cap = s->n + t->slack;
    uint8_t *m = malloc(cap ? cap : 1);
    for (size_t i = 0; i < s->n; i++) {
        for (int r = 0; r < t->per_byte; r++) {
            uint8_t b = t->replace(i, r, s->p[i]);
            if (b == s->p[i])
                continue;
            memcpy(m, s->p, s->n);
            m[i] = b;
            fuzz_run_input(t, m, s->n);
        }
    }
    for (int k = 0; k < t->random_runs; k++) {
        memcpy(m, s->p, s->n);
        size_t len = t->mutate ? t->mutate(m, s->n, cap, rng)
                               : fuzz_mutate_tokens(m, s->n, cap, rng, t->tokens, t->keep);
        fuzz_run_input(t, m, len);
    }
    free(m);
}

/**
 * The standalone main: runs argv's files and directories, then every seed with its
 * mutations, printing a line per seed; with `--write-seeds DIR` only writes the
 * seeds. Frees the seeds. Returns the exit status (1 when a path or seed failed).
 */
static int fuzz_main(const fuzz_target *t, int argc, char **argv, fuzz_seed *seeds, int nseeds) {
    int rc = 0, only_write = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--write-seeds") == 0 && i + 1 < argc) {
            rc |= fuzz_write_seeds(t, argv[++i], seeds, nseeds);
            only_write = 1;
        } else {
            rc |= fuzz_run_path(t, argv[i]);
        }
    }
    uint64_t rng = t->rng_init;
    for (int k = 0; k < nseeds; k++) {
        if (only_write) {
            free(seeds[k].p);
            continue;
        }
        if (t->rng_per_seed)
            rng = t->rng_init + (uint64_t)k;
        unsigned long before = fuzz_n_inputs;
        fuzz_mutate_all(t, &seeds[k], &rng);
        printf("seed %-10s %6zu bytes: %lu inputs\n", seeds[k].label, seeds[k].n,
               fuzz_n_inputs - before);
        free(seeds[k].p);
    }
    return rc;
}

#endif /* MXK_FUZZ_DRIVER_H */
