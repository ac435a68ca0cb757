/* The progress bar of the training commands on a terminal (train_progress.h). */
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "train_progress.h"

/** Shortest time between two redraws (seconds). */
#define REDRAW_S 0.1

/** Monotonic seconds (see train_progress.h). */
double train_now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/** Erases the bar from stderr's current line. */
static void clear_bar(train_progress *p) {
    if (p->shown) {
        fputs("\r\033[K", stderr);
        p->shown = 0;
    }
}

/** fopencookie write: clears the bar, then writes to stderr. */
static ssize_t log_write(void *cookie, const char *buf, size_t size) {
    clear_bar(cookie);
    return (ssize_t)fwrite(buf, 1, size, stderr);
}

/** Starts the bar (see train_progress.h). */
void train_progress_open(train_progress *p, int wanted) {
    memset(p, 0, sizeof *p);
    p->log = stderr;
    if (!wanted || !isatty(STDERR_FILENO))
        return;
    cookie_io_functions_t io = {.write = log_write};
    FILE *f = fopencookie(p, "w", io);
    if (f == NULL)
        return;
    setvbuf(f, NULL, _IOLBF, 0);
    p->log = f;
    p->on = 1;
}

/** Redraws or clears the bar for a pass (see train_progress.h). */
void train_progress_cb(const mxkt_progress *prog, void *user) {
    train_progress *p = user;
    if (!p->on)
        return;
    fflush(p->log);
    if (prog->done) {
        clear_bar(p);
        return;
    }
    double t = train_now_s();
    if (p->shown && t - p->drawn_s < REDRAW_S && prog->batch != prog->num_batches)
        return;
    struct winsize ws;
    int width = ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0 ? ws.ws_col : 80;
    char line[512];
    size_t len = mxkt_progress_format(prog, line, sizeof line);
    if (len >= (size_t)width) /* the last column would wrap on some terminals */
        line[width - 1] = '\0';
    fprintf(stderr, "\r%s\033[K", line);
    fflush(stderr);
    p->shown = 1;
    p->drawn_s = t;
}

/** Ends the bar (see train_progress.h). */
void train_progress_close(train_progress *p) {
    if (p->log != stderr && p->log != NULL)
        fclose(p->log);
    p->log = stderr;
    clear_bar(p);
    p->on = 0;
}
