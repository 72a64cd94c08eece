// The raw-libev side of loop-bench, written as a C programmer would against libev. Loops
// are destroyed with their watchers still started: ev_loop_destroy needs no stops.
#define _GNU_SOURCE
#include "clibevbench.h"

#include <ev.h>
#include <malloc.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <spawn.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <errno.h>
#include <fcntl.h>
#include <time.h>
#include <unistd.h>

static int64_t clock_ns(clockid_t clock) {
    struct timespec ts;
    clock_gettime(clock, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int64_t lb_monotonic_ns(void) { return clock_ns(CLOCK_MONOTONIC); }
int64_t lb_realtime_ns(void) { return clock_ns(CLOCK_REALTIME); }
int64_t lb_process_cpu_ns(void) { return clock_ns(CLOCK_PROCESS_CPUTIME_ID); }

int64_t lb_process_voluntary_switches(void) {
    struct rusage usage;
    if (getrusage(RUSAGE_SELF, &usage) != 0) return -1;
    return usage.ru_nvcsw;
}

int64_t lb_resident_bytes(void) {
    FILE *file = fopen("/proc/self/statm", "r");
    if (!file) return -1;
    long size = 0, resident = 0;
    int read = fscanf(file, "%ld %ld", &size, &resident);
    fclose(file);
    return read == 2 ? (int64_t)resident * sysconf(_SC_PAGESIZE) : -1;
}

int64_t lb_heap_in_use_bytes(void) {
    struct mallinfo2 info = mallinfo2();
    return (int64_t)(info.uordblks + info.hblkhd);
}

void lb_keep_freed_memory(void) {
    mallopt(M_MMAP_THRESHOLD, 32 * 1024 * 1024);
    mallopt(M_TRIM_THRESHOLD, 1024 * 1024 * 1024);
}

// The calling thread's CPUs before the first pin.
static cpu_set_t unpinned;
static int unpinned_saved;

int lb_pin_to_cpu(int index) {
    if (!unpinned_saved) {
        if (sched_getaffinity(0, sizeof unpinned, &unpinned) != 0) return -1;
        unpinned_saved = 1;
    }
    int count = CPU_COUNT(&unpinned);
    if (count <= 0) return -1;
    int wanted = index % count, seen = 0;
    for (int cpu = 0; cpu < CPU_SETSIZE; cpu++) {
        if (!CPU_ISSET(cpu, &unpinned)) continue;
        if (seen++ != wanted) continue;
        cpu_set_t one;
        CPU_ZERO(&one);
        CPU_SET(cpu, &one);
        return sched_setaffinity(0, sizeof one, &one) == 0 ? cpu : -1;
    }
    return -1;
}

void lb_unpin(void) {
    if (unpinned_saved) sched_setaffinity(0, sizeof unpinned, &unpinned);
}

int lb_libev_version_major(void) { return ev_version_major(); }
int lb_libev_version_minor(void) { return ev_version_minor(); }

static void run_over(struct ev_loop *loop, ev_timer *w, int revents) { ev_break(loop, EVBREAK_ALL); }

static void stop_after(struct ev_loop *loop, ev_timer *stop, double seconds) {
    ev_timer_init(stop, run_over, seconds, 0.);
    ev_now_update(loop);
    ev_timer_start(loop, stop);
}

/// Runs `loop` beside a new thread running `body(argument)`; -1 if the thread did not start.
static int run_beside(struct ev_loop *loop, void *(*body)(void *), void *argument) {
    pthread_t thread;
    if (pthread_create(&thread, NULL, body, argument) != 0) return -1;
    ev_run(loop, 0);
    pthread_join(thread, NULL);
    return 0;
}

/// A sender thread paced by the loop: `samples` sends, each `gap_seconds` after the loop
/// handled the previous one (asleep again); `paced_handled` records each latency. A
/// workload's own state embeds it first.
typedef struct paced paced;
struct paced {
    int32_t samples;
    double gap_seconds;
    _Atomic int64_t sent_at;
    _Atomic int32_t handled;
    int64_t *latencies;
    /// One send; nonzero stops the sender.
    int (*send)(paced *run);
};

static void *paced_sender(void *argument) {
    paced *run = argument;
    struct timespec gap = {0, (long)(run->gap_seconds * 1e9)};
    for (int32_t i = 0; i < run->samples; i++) {
        while (atomic_load_explicit(&run->handled, memory_order_acquire) < i) sched_yield();
        nanosleep(&gap, NULL);  // let the loop go back to sleep
        atomic_store_explicit(&run->sent_at, lb_monotonic_ns(), memory_order_release);
        if (run->send(run) != 0) break;
    }
    return NULL;
}

static void paced_handled(struct ev_loop *loop, paced *run) {
    int64_t now = lb_monotonic_ns();
    int32_t index = atomic_load_explicit(&run->handled, memory_order_relaxed);
    if (index >= run->samples) return;
    run->latencies[index] = now - atomic_load_explicit(&run->sent_at, memory_order_acquire);
    atomic_store_explicit(&run->handled, index + 1, memory_order_release);
    if (index + 1 == run->samples) ev_break(loop, EVBREAK_ALL);
}

static void never_fired(struct ev_loop *loop, ev_timer *w, int revents) {}
static void never_readable(struct ev_loop *loop, ev_io *w, int revents) {}

typedef struct {
    uint64_t fires;
    uint64_t wakes;
    lb_fire_log *log;
    lb_fire_log *wake_log;
} timer_run;

static void timer_fired(struct ev_loop *loop, ev_timer *w, int revents) {
    timer_run *run = ev_userdata(loop);
    run->fires++;
    lb_fire_log *log = run->log;
    if (log && log->count < log->capacity) {
        log->ids[log->count] = (int32_t)(intptr_t)w->data;
        log->times[log->count] = lb_monotonic_ns();
        log->count++;
    }
}

static void woke(struct ev_loop *loop, ev_check *w, int revents) { ((timer_run *)ev_userdata(loop))->wakes++; }

static void woke_logged(struct ev_loop *loop, ev_check *w, int revents) {
    woke(loop, w, revents);
    lb_fire_log *log = ((timer_run *)ev_userdata(loop))->wake_log;
    if (log->count < log->capacity) log->times[log->count++] = lb_monotonic_ns();
}

// What callgrind counts (`--toggle-collect='*measured*'`) is out of line under names holding
// `measured`. An uncounted round inlines the same loop: the linker would fold a twin function
// into the measured one.

__attribute__((noinline)) static void lb_measuredFire(struct ev_loop *loop) { ev_run(loop, 0); }

static inline __attribute__((always_inline)) void start_timers(struct ev_loop *loop, ev_timer *timers, int32_t count,
                                                               const double *after) {
    for (int32_t i = 0; i < count; i++) {
        ev_timer_init(&timers[i], never_fired, after[i], 0.);
        ev_timer_start(loop, &timers[i]);
    }
}

static inline __attribute__((always_inline)) void stop_timers(struct ev_loop *loop, ev_timer *timers, int32_t count,
                                                              const int32_t *stop_order) {
    for (int32_t i = 0; i < count; i++) ev_timer_stop(loop, &timers[stop_order[i]]);
}

__attribute__((noinline)) static void lb_measuredAdd(struct ev_loop *loop, ev_timer *timers, int32_t count,
                                                     const double *after) {
    start_timers(loop, timers, count, after);
}

__attribute__((noinline)) static void lb_measuredInvalidate(struct ev_loop *loop, ev_timer *timers, int32_t count,
                                                            const int32_t *stop_order) {
    stop_timers(loop, timers, count, stop_order);
}

int lb_run_timers(int32_t count, double interval, const double *intervals, const double *first_after,
                  double collect_interval, double seconds,
                  int64_t *start_ns, lb_fire_log *log, lb_fire_log *wakes, lb_run_stats *stats) {
    struct ev_loop *loop = ev_loop_new(EVFLAG_AUTO);
    if (!loop) return -1;
    if (collect_interval > 0) ev_set_timeout_collect_interval(loop, collect_interval);
    timer_run run = {0, 0, log, wakes};
    ev_set_userdata(loop, &run);

    ev_timer *timers = malloc(sizeof(ev_timer) * (size_t)(count > 0 ? count : 1));
    ev_now_update(loop);
    *start_ns = lb_monotonic_ns();
    for (int32_t i = 0; i < count; i++) {
        ev_timer_init(&timers[i], timer_fired, first_after[i], intervals ? intervals[i] : interval);
        timers[i].data = (void *)(intptr_t)i;
        ev_timer_start(loop, &timers[i]);
    }
    ev_check check;
    ev_check_init(&check, wakes ? woke_logged : woke);
    ev_check_start(loop, &check);

    ev_timer stop;
    stop_after(loop, &stop, seconds);
    int64_t cpu0 = lb_process_cpu_ns(), wall0 = lb_monotonic_ns();
    int64_t switches0 = lb_process_voluntary_switches();
    lb_measuredFire(loop);
    stats->cpu_ns = lb_process_cpu_ns() - cpu0;
    stats->wall_ns = lb_monotonic_ns() - wall0;
    stats->voluntary_switches = lb_process_voluntary_switches() - switches0;
    stats->fires = run.fires;
    stats->wakes = run.wakes;
    ev_loop_destroy(loop);
    free(timers);
    return 0;
}

int lb_schedule_cost(int32_t count, const double *after, const int32_t *stop_order, int warm_up,
                     int64_t *schedule_ns, int64_t *invalidate_ns) {
    struct ev_loop *loop = ev_loop_new(EVFLAG_AUTO);
    if (!loop) return -1;
    ev_timer *timers = malloc(sizeof(ev_timer) * (size_t)(count > 0 ? count : 1));
    int64_t t0 = lb_monotonic_ns();
    if (warm_up) start_timers(loop, timers, count, after); else lb_measuredAdd(loop, timers, count, after);
    int64_t t1 = lb_monotonic_ns();
    if (warm_up) stop_timers(loop, timers, count, stop_order); else lb_measuredInvalidate(loop, timers, count, stop_order);
    int64_t t2 = lb_monotonic_ns();
    *schedule_ns = t1 - t0;
    *invalidate_ns = t2 - t1;
    free(timers);
    ev_loop_destroy(loop);
    return 0;
}

typedef struct {
    int32_t wanted;
    int32_t seen;
    int64_t *wall_times;
} aligned_run;

static void periodic_fired(struct ev_loop *loop, ev_periodic *w, int revents) {
    aligned_run *run = ev_userdata(loop);
    run->wall_times[run->seen++] = lb_realtime_ns();
    if (run->seen == run->wanted) ev_break(loop, EVBREAK_ALL);
}

int lb_aligned(double interval, int32_t fires, int64_t *wall_times) {
    struct ev_loop *loop = ev_loop_new(EVFLAG_AUTO);
    if (!loop) return -1;
    aligned_run run = {fires, 0, wall_times};
    ev_set_userdata(loop, &run);
    ev_periodic periodic;
    ev_periodic_init(&periodic, periodic_fired, 0., interval, 0);
    ev_periodic_start(loop, &periodic);
    ev_run(loop, 0);
    ev_loop_destroy(loop);
    return 0;
}

typedef struct {
    paced paced;
    struct ev_loop *loop;
    ev_async async;
} wake_run;

static void wake_handled(struct ev_loop *loop, ev_async *w, int revents) { paced_handled(loop, ev_userdata(loop)); }

static int wake_send(paced *run) {
    ev_async_send(((wake_run *)run)->loop, &((wake_run *)run)->async);
    return 0;
}

int lb_cross_thread_wake(int32_t samples, double gap_seconds, int64_t *latencies) {
    struct ev_loop *loop = ev_loop_new(EVFLAG_AUTO);
    if (!loop) return -1;
    wake_run run = {{samples, gap_seconds, 0, 0, latencies, wake_send}, loop};
    ev_set_userdata(loop, &run);
    ev_async_init(&run.async, wake_handled);
    ev_async_start(loop, &run.async);
    int status = run_beside(loop, paced_sender, &run);
    ev_loop_destroy(loop);
    return status;
}

typedef struct {
    ev_async async;
    uint64_t prepares;
    uint64_t checks;
    int wake_each_pass;
} pass_run;

static void before_poll(struct ev_loop *loop, ev_prepare *w, int revents) {
    pass_run *run = ev_userdata(loop);
    run->prepares++;
    if (run->wake_each_pass) ev_async_send(loop, &run->async);
}

static void after_poll(struct ev_loop *loop, ev_check *w, int revents) { ((pass_run *)ev_userdata(loop))->checks++; }

static void async_ignored(struct ev_loop *loop, ev_async *w, int revents) {}

int lb_pass_overhead(int32_t passes, int wake_each_pass, int64_t *total_ns) {
    struct ev_loop *loop = ev_loop_new(EVFLAG_AUTO);
    if (!loop) return -1;
    pass_run run = {.wake_each_pass = wake_each_pass};
    ev_set_userdata(loop, &run);
    ev_async_init(&run.async, async_ignored);
    ev_async_start(loop, &run.async);
    ev_prepare prepare;
    ev_prepare_init(&prepare, before_poll);
    ev_prepare_start(loop, &prepare);
    ev_check check;
    ev_check_init(&check, after_poll);
    ev_check_start(loop, &check);
    int flags = wake_each_pass ? EVRUN_ONCE : EVRUN_NOWAIT;
    int64_t t0 = lb_monotonic_ns();
    for (int32_t i = 0; i < passes; i++) ev_run(loop, flags);
    *total_ns = lb_monotonic_ns() - t0;
    ev_loop_destroy(loop);
    return run.checks == (uint64_t)passes ? 0 : -1;
}

typedef struct {
    paced paced;
    int32_t active_write_fd;
    int feeding;
    int64_t feeds;
} descriptor_run;

static void active_readable(struct ev_loop *loop, ev_io *w, int revents) {
    descriptor_run *run = ev_userdata(loop);
    char byte;
    if (read(w->fd, &byte, 1) != 1) return;
    if (run->feeding) {
        run->feeds++;
        if (write(run->active_write_fd, &byte, 1) != 1) ev_break(loop, EVBREAK_ALL);
        return;
    }
    paced_handled(loop, &run->paced);
}

static int descriptor_send(paced *run) {
    char byte = 1;
    return write(((descriptor_run *)run)->active_write_fd, &byte, 1) == 1 ? 0 : -1;
}

int lb_descriptors(int32_t count, const int32_t *read_fds, int32_t active_write_fd,
                   int32_t samples, double gap_seconds, double feed_seconds,
                   int64_t *add_ns, int64_t *latencies, int64_t *feeds, int64_t *feed_wall_ns) {
    struct ev_loop *loop = ev_loop_new(EVFLAG_AUTO);
    if (!loop) return -1;
    descriptor_run run = {{samples, gap_seconds, 0, 0, latencies, descriptor_send}, active_write_fd};
    ev_set_userdata(loop, &run);
    ev_io *watchers = malloc(sizeof(ev_io) * (size_t)(count + 1));
    if (!watchers) return -1;
    int64_t t0 = lb_monotonic_ns();
    for (int32_t i = 0; i <= count; i++) {
        ev_io_init(&watchers[i], i == count ? active_readable : never_readable, read_fds[i], EV_READ);
        ev_io_start(loop, &watchers[i]);
    }
    *add_ns = lb_monotonic_ns() - t0;
    int status = run_beside(loop, paced_sender, &run);

    // Feeding: the callback writes back each byte it reads; a timer ends the window.
    run.feeding = 1;
    ev_timer stop;
    stop_after(loop, &stop, feed_seconds);
    char byte = 1;
    int64_t wall0 = lb_monotonic_ns();
    if (status == 0 && write(active_write_fd, &byte, 1) == 1) ev_run(loop, 0);
    *feed_wall_ns = lb_monotonic_ns() - wall0;
    *feeds = run.feeds;
    (void)!read(read_fds[count], &byte, 1);  // the byte in flight when the window ended
    ev_loop_destroy(loop);
    free(watchers);
    return status;
}

int lb_idle_eventfd(void) { return eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC); }

// The set is its loop, the timers its user data.
void *lb_timer_set_create(int32_t count) {
    struct ev_loop *loop = ev_loop_new(EVFLAG_AUTO);
    ev_timer *timers = malloc(sizeof(ev_timer) * (size_t)(count > 0 ? count : 1));
    if (!loop || !timers) return NULL;
    ev_set_userdata(loop, timers);
    for (int32_t i = 0; i < count; i++) {
        ev_timer_init(&timers[i], never_fired, 3600. + i * 1e-6, 0.);
        ev_timer_start(loop, &timers[i]);
    }
    return loop;
}

void lb_timer_set_destroy(void *loop) {
    free(ev_userdata(loop));
    ev_loop_destroy(loop);
}

extern char **environ;

typedef struct {
    int64_t handled_at;
    int status;
} child_run;

static void child_exited(struct ev_loop *loop, ev_child *w, int revents) {
    child_run *run = w->data;
    run->handled_at = lb_monotonic_ns();
    run->status = w->rstatus;
    ev_child_stop(loop, w);
}

int lb_child_exits(int32_t samples, int64_t *latencies) {
    struct ev_loop *loop = ev_default_loop(EVFLAG_AUTO);
    if (!loop) return -1;
    char *argv[] = {"/bin/true", NULL};
    for (int32_t i = 0; i < samples; i++) {
        child_run run = {0, -1};
        ev_child watcher;
        int64_t start = lb_monotonic_ns();
        pid_t pid;
        int error = posix_spawn(&pid, argv[0], NULL, NULL, argv, environ);
        if (error != 0) {
            errno = error;
            return -1;
        }
        ev_child_init(&watcher, child_exited, pid, 0);
        watcher.data = &run;
        ev_child_start(loop, &watcher);
        // Returns once the watcher stopped: libev's SIGCHLD watcher holds no reference.
        ev_run(loop, 0);
        if (!WIFEXITED(run.status) || WEXITSTATUS(run.status) != 0) {
            errno = ECHILD;
            return -1;
        }
        if (latencies) latencies[i] = run.handled_at - start;
    }
    return 0;
}

/// An `ev_stat` on a file and a writer thread appending to it, paced or in a burst.
typedef struct {
    paced paced;
    int fd;
    int32_t writes;
    int64_t callouts;
} file_run;

static int file_append(paced *run) {
    char byte = 'x';
    return write(((file_run *)run)->fd, &byte, 1) == 1 ? 0 : -1;
}

static void file_changed(struct ev_loop *loop, ev_stat *w, int revents) { paced_handled(loop, w->data); }

static void *burst_writer(void *argument) {
    file_run *run = argument;
    for (int32_t i = 0; i < run->writes; i++) {
        if (file_append(&run->paced) != 0) break;
    }
    return NULL;
}

static void burst_changed(struct ev_loop *loop, ev_stat *w, int revents) { ((file_run *)w->data)->callouts++; }

/// Watches `path` with `changed` beside `writer` (for `window_seconds` when positive).
static int watch_file(const char *path, file_run *run, void (*changed)(struct ev_loop *, ev_stat *, int),
                      void *(*writer)(void *), double window_seconds) {
    run->fd = open(path, O_WRONLY | O_APPEND | O_CLOEXEC);
    if (run->fd < 0) return -1;
    struct ev_loop *loop = ev_loop_new(EVFLAG_AUTO);
    if (!loop) return -1;
    ev_stat watcher;
    ev_stat_init(&watcher, changed, path, 0.);
    watcher.data = run;
    ev_stat_start(loop, &watcher);
    ev_timer stop;
    if (window_seconds > 0) stop_after(loop, &stop, window_seconds);
    int status = run_beside(loop, writer, run);
    ev_stat_stop(loop, &watcher);
    ev_loop_destroy(loop);
    close(run->fd);
    return status;
}

int lb_file_changes(const char *path, int32_t samples, double gap_seconds, int64_t *latencies) {
    file_run run = {{samples, gap_seconds, 0, 0, latencies, file_append}};
    int status = watch_file(path, &run, file_changed, paced_sender, 0);
    return status == 0 && atomic_load(&run.paced.handled) == samples ? 0 : -1;
}

int lb_file_burst(const char *path, int32_t writes, double window_seconds, int64_t *callouts) {
    file_run run = {.writes = writes};
    int status = watch_file(path, &run, burst_changed, burst_writer, window_seconds);
    *callouts = run.callouts;
    return status;
}

typedef struct {
    int32_t target;
    int32_t count;
} idle_run;

static void idle_counted(struct ev_loop *loop, ev_idle *w, int revents) {
    idle_run *run = w->data;
    if (++run->count == run->target) {
        ev_idle_stop(loop, w);
        ev_break(loop, EVBREAK_ALL);
    }
}

__attribute__((noinline)) static void lb_measuredIdle(struct ev_loop *loop) { ev_run(loop, 0); }

int lb_idle(int32_t callouts, int32_t watched_fd, int64_t *cpu_ns) {
    struct ev_loop *loop = ev_loop_new(EVFLAG_AUTO);
    if (!loop) return -1;
    idle_run run = {.target = callouts};
    ev_idle watcher;
    ev_idle_init(&watcher, idle_counted);
    watcher.data = &run;
    ev_idle_start(loop, &watcher);
    ev_io watched;
    if (watched_fd >= 0) {
        ev_io_init(&watched, never_readable, watched_fd, EV_READ);
        ev_io_start(loop, &watched);
    }
    int64_t cpu0 = lb_process_cpu_ns();
    lb_measuredIdle(loop);
    *cpu_ns = lb_process_cpu_ns() - cpu0;
    ev_loop_destroy(loop);
    return run.count == callouts ? 0 : -1;
}
