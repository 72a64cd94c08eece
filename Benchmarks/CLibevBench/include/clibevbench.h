// CLibevBench: the raw-libev side of every loop-bench workload, and the clocks and process
// counters every peer is measured with. Each lb_* workload runs a loop of its own on the
// calling thread and returns 0, or -1 (with errno where it says). No libev type is exposed.
#ifndef CLIBEVBENCH_H
#define CLIBEVBENCH_H

#include <stdint.h>

/// Monotonic, wall-clock (since 1970) and process CPU time (every thread) in ns.
int64_t lb_monotonic_ns(void);
int64_t lb_realtime_ns(void);
int64_t lb_process_cpu_ns(void);
/// Voluntary context switches of the process (`ru_nvcsw`): how wakes are counted for every peer.
int64_t lb_process_voluntary_switches(void);
/// Resident set size in bytes, or -1; bytes malloc has in use over all arenas.
int64_t lb_resident_bytes(void);
int64_t lb_heap_in_use_bytes(void);
/// Makes malloc keep what is freed, so that a measured round reuses the untimed round's
/// memory instead of page-faulting it in again.
void lb_keep_freed_memory(void);
/// Binds the calling thread (and what it starts after) to the `index`-th of its CPUs (modulo
/// their count); returns the CPU, or -1. `lb_unpin` gives back the CPUs it had before.
int lb_pin_to_cpu(int index);
void lb_unpin(void);
/// Counts every thread's calls into malloc and its kin (alloccount.c interposes them) from
/// start to stop, which returns the count.
void lb_alloc_counting_start(void);
int64_t lb_alloc_counting_stop(void);
/// libev's runtime version.
int lb_libev_version_major(void);
int lb_libev_version_minor(void);

/// What one measured run did, setup and teardown outside the window: timer callouts, wakes
/// (`ev_check` callouts: one per return from the poll), process CPU and wall ns, switches.
typedef struct {
    uint64_t fires;
    uint64_t wakes;
    int64_t cpu_ns;
    int64_t wall_ns;
    int64_t voluntary_switches;
} lb_run_stats;

/// Which timer (`ids[i]`) fired when (`times[i]`, monotonic ns); NULL arrays only count.
typedef struct {
    int32_t *ids;
    int64_t *times;
    int64_t capacity;
    int64_t count;
} lb_fire_log;

/// `count` repeating `ev_timer`s of `interval` (or `intervals[i]`), timer i first firing
/// `first_after[i]` s after `*start_ns`, with `ev_set_timeout_collect_interval` when
/// `collect_interval` > 0, run for `seconds`; each fire in `log`, each wake's time in `wakes`.
int lb_run_timers(int32_t count, double interval, const double *intervals, const double *first_after,
                  double collect_interval, double seconds,
                  int64_t *start_ns, lb_fire_log *log, lb_fire_log *wakes, lb_run_stats *stats);

/// Times starting `count` timers due `after[i]` s from now, then stopping them in
/// `stop_order`; `warm_up`: the same work outside what callgrind's `*measured*` counts.
int lb_schedule_cost(int32_t count, const double *after, const int32_t *stop_order, int warm_up,
                     int64_t *schedule_ns, int64_t *invalidate_ns);

/// An `ev_periodic` at `k * interval` on the wall clock: its first `fires` callouts' wall times.
int lb_aligned(double interval, int32_t fires, int64_t *wall_times);

/// `samples` `ev_async_send`s from another thread, each `gap_seconds` after the last was
/// handled: send-to-callout latencies (ns).
int lb_cross_thread_wake(int32_t samples, double gap_seconds, int64_t *latencies);

/// `passes` passes with an `ev_prepare` and an `ev_check`: polling (`EVRUN_NOWAIT`), or with
/// `wake_each_pass` `EVRUN_ONCE` woken by an `ev_async_send` from the prepare. Total wall ns.
int lb_pass_overhead(int32_t passes, int wake_each_pass, int64_t *total_ns);

/// An `ev_io` on each of `read_fds` (`count` idle ones, then the active pipe's): the time to
/// start them; write-to-callback latencies of `samples` paced writes from another thread;
/// then the callback writing back each byte for `feed_seconds`: `*feeds` in `*feed_wall_ns`.
int lb_descriptors(int32_t count, const int32_t *read_fds, int32_t active_write_fd,
                   int32_t samples, double gap_seconds, double feed_seconds,
                   int64_t *add_ns, int64_t *latencies, int64_t *feeds, int64_t *feed_wall_ns);

/// An eventfd nobody writes: an idle descriptor of the descriptors workload, or -1.
int lb_idle_eventfd(void);

/// A loop holding `count` started `ev_timer`s an hour away (memory), or NULL.
void *lb_timer_set_create(int32_t count);
void lb_timer_set_destroy(void *set);

/// `samples` `/bin/true` children in turn, each watched by an `ev_child` on the default loop
/// (the only one `ev_child` works on): spawn-to-callback latencies (ns).
int lb_child_exits(int32_t samples, int64_t *latencies);

/// An `ev_stat` on `path` (inotify on Linux) and `samples` paced one-byte appends from
/// another thread: write-to-callback latencies (ns).
int lb_file_changes(const char *path, int32_t samples, double gap_seconds, int64_t *latencies);

/// An `ev_stat` on `path` and `writes` one-byte appends back to back: the callouts in
/// `window_seconds`.
int lb_file_burst(const char *path, int32_t writes, double window_seconds, int64_t *callouts);

/// An `ev_idle` run for `callouts` callouts (with an `ev_io` on `watched_fd` when ≥ 0): the
/// run's process CPU ns.
int lb_idle(int32_t callouts, int32_t watched_fd, int64_t *cpu_ns);

#endif
