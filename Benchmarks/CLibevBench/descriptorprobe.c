// descriptor-probe's libev side, written as a C programmer new to libev would write it.
#include "descriptorprobe.h"

#include <ev.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static int64_t probe_calls;
static int probe_write_fd;

static int64_t probe_now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void probe_readable(struct ev_loop *loop, ev_io *w, int revents) {
    (void)loop;
    (void)revents;
    char byte;
    if (read(w->fd, &byte, 1) == 1) {
        probe_calls++;
        (void)!write(probe_write_fd, &byte, 1);
    }
}

static void probe_over(struct ev_loop *loop, ev_timer *w, int revents) {
    (void)w;
    (void)revents;
    ev_break(loop, EVBREAK_ALL);
}

/// One `ev_run` until a timer of `seconds` ends it. Not static, and named so, for callgrind.
__attribute__((noinline)) void dp_libev_measuredRun(struct ev_loop *loop, double seconds) {
    ev_timer over;
    ev_timer_init(&over, probe_over, seconds, 0.);
    ev_now_update(loop);
    ev_timer_start(loop, &over);
    ev_run(loop, 0);
    ev_timer_stop(loop, &over);
}

int dp_libev_feed(int32_t count, const int32_t *read_fds, int32_t active_write_fd, int default_loop,
                  double warmup_seconds, double seconds, int64_t *calls, int64_t *wall_ns, int64_t *add_ns) {
    struct ev_loop *loop = default_loop ? ev_default_loop(0) : ev_loop_new(EVFLAG_AUTO);
    if (!loop) return -1;
    ev_io *watchers = malloc(sizeof(ev_io) * (size_t)count);
    if (!watchers) return -1;
    probe_write_fd = active_write_fd;
    int64_t t0 = probe_now_ns();
    for (int32_t i = 0; i < count; i++) {
        ev_io_init(&watchers[i], probe_readable, read_fds[i], EV_READ);
        ev_io_start(loop, &watchers[i]);
    }
    *add_ns = probe_now_ns() - t0;
    char byte = 1;
    if (write(active_write_fd, &byte, 1) != 1) return -1;
    if (warmup_seconds > 0) {
        ev_timer over;
        ev_timer_init(&over, probe_over, warmup_seconds, 0.);
        ev_now_update(loop);
        ev_timer_start(loop, &over);
        ev_run(loop, 0);
        ev_timer_stop(loop, &over);
    }
    probe_calls = 0;
    int64_t wall0 = probe_now_ns();
    dp_libev_measuredRun(loop, seconds);
    *wall_ns = probe_now_ns() - wall0;
    *calls = probe_calls;
    for (int32_t i = 0; i < count; i++) ev_io_stop(loop, &watchers[i]);
    free(watchers);
    if (!default_loop) ev_loop_destroy(loop);
    return 0;
}
