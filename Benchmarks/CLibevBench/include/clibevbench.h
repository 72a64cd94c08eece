// CLibevBench: the raw-libev side of every loop-bench workload, plus the clocks and
// process counters that every peer is measured with.
//
// Each lb_* workload creates its own loop with ev_loop_new (lb_child_exits: libev's default
// loop), runs on the calling thread, and destroys the loop before it returns; each returns 0,
// or -1 when the loop could not be created (or as it says). The header does not include
// <ev.h>, so Swift code that imports this module sees no libev types.
#ifndef CLIBEVBENCH_H
#define CLIBEVBENCH_H

#include <stdint.h>

// MARK: Clocks and process counters (used for every peer)

/// `clock_gettime(CLOCK_MONOTONIC)` in nanoseconds.
int64_t lb_monotonic_ns(void);
/// `clock_gettime(CLOCK_REALTIME)` in nanoseconds since 1970.
int64_t lb_realtime_ns(void);
/// `clock_gettime(CLOCK_PROCESS_CPUTIME_ID)` in nanoseconds: CPU time of every thread.
int64_t lb_process_cpu_ns(void);
/// `getrusage(RUSAGE_SELF).ru_nvcsw`: voluntary context switches of every thread of the
/// process (each time a thread blocks: how wakes are counted for every peer).
int64_t lb_process_voluntary_switches(void);
/// Resident set size of the process in bytes (`/proc/self/statm`), or -1.
int64_t lb_resident_bytes(void);
/// Bytes in use by malloc over all arenas (`mallinfo2().uordblks + hblkhd`).
int64_t lb_heap_in_use_bytes(void);
/// Makes malloc keep what is freed (no trim, no mmap below 32 MB): in a fresh process, the
/// measured round after an untimed one then reuses the untimed round's memory instead of
/// page-faulting it in again (the schedule workload's children).
void lb_keep_freed_memory(void);
/// Binds the calling thread to the `index`-th CPU (modulo their count) of the CPUs it may run
/// on when first called; what it starts afterwards (a pair's child) inherits the binding.
/// Returns the CPU's number, or -1 (the binding is then unchanged).
int lb_pin_to_cpu(int index);
/// Gives the calling thread back the CPUs it had before the first `lb_pin_to_cpu`.
void lb_unpin(void);
/// Starts counting, from zero, every thread's calls into malloc, calloc, realloc, memalign,
/// aligned_alloc and posix_memalign (this executable interposes them: alloccount.c).
void lb_alloc_counting_start(void);
/// Stops counting; returns the calls counted since `lb_alloc_counting_start`.
int64_t lb_alloc_counting_stop(void);
/// libev's runtime version.
int lb_libev_version_major(void);
int lb_libev_version_minor(void);

// MARK: Shared result types

/// What one measured run of a loop did. Setup and teardown are outside the window.
typedef struct {
    /// Timer callouts in the window.
    uint64_t fires;
    /// Loop wakes in the window: `ev_check` callouts (one per return from the backend poll).
    uint64_t wakes;
    /// CPU time of the process in the window (ns); the calling thread is the only busy one.
    int64_t cpu_ns;
    /// Wall time of the window (ns).
    int64_t wall_ns;
    /// Voluntary context switches of the process in the window.
    int64_t voluntary_switches;
} lb_run_stats;

/// A log of timer callouts: which timer (`ids[i]`) fired when (`times[i]`, monotonic ns).
/// Pass NULL arrays (capacity 0) to only count fires.
typedef struct {
    int32_t *ids;
    int64_t *times;
    int64_t capacity;
    int64_t count;
} lb_fire_log;

// MARK: Workloads

/// Starts `count` repeating `ev_timer`s with `interval` (s), or timer i with `intervals[i]`
/// when `intervals` is not NULL; timer i first fires `first_after[i]` seconds after the
/// common start, whose monotonic time (ns) is stored in `*start_ns`. With `collect_interval`
/// > 0, calls `ev_set_timeout_collect_interval`. Runs the loop for `seconds` (measured in
/// `*stats`, callouts logged in `log` if given).
int lb_run_timers(int32_t count, double interval, const double *intervals, const double *first_after,
                  double collect_interval, double seconds,
                  int64_t *start_ns, lb_fire_log *log, lb_run_stats *stats);

/// Times `ev_timer_init` + `ev_timer_start` for `count` timers firing `after[i]` seconds
/// from now (never reached), then `ev_timer_stop` in the order `stop_order` (a permutation).
/// Stores the two totals in ns. `warm_up` nonzero: the same work outside the functions that
/// callgrind's `*measured*` pattern counts (an untimed first round).
int lb_schedule_cost(int32_t count, const double *after, const int32_t *stop_order, int warm_up,
                     int64_t *schedule_ns, int64_t *invalidate_ns);

/// An `ev_periodic` at `k * interval` on the wall clock; records the wall-clock time (ns
/// since 1970) of its first `fires` callouts in `wall_times`.
int lb_aligned(double interval, int32_t fires, int64_t *wall_times);

/// Another thread calls `ev_async_send` `samples` times, `gap_seconds` apart and each
/// after the previous one was handled; stores send-to-callout latencies (ns).
int lb_cross_thread_wake(int32_t samples, double gap_seconds, int64_t *latencies);

/// Runs `passes` passes with an `ev_prepare` and an `ev_check` watcher (libev's only
/// per-pass observers). `wake_each_pass` = 0: `ev_run(EVRUN_NOWAIT)` polls; nonzero:
/// `ev_run(EVRUN_ONCE)` with the prepare watcher calling `ev_async_send`, so each pass
/// goes to the backend and returns at once. Stores the total wall time (ns).
int lb_pass_overhead(int32_t passes, int wake_each_pass, int64_t *total_ns);

/// Descriptor sources: an `ev_io` (EV_READ) on each of `read_fds` (`count` idle read ends,
/// then the active pipe's; `active_write_fd` is its write end). Stores the time to init and
/// start all `count + 1` watchers. Then another thread writes one byte to the active pipe
/// `samples` times, `gap_seconds` apart and each after the previous byte was read by the
/// callback: write-to-callback latencies (ns). Then the callback feeds itself (reads the
/// byte, writes one back) for `feed_seconds`: `*feeds` callbacks in `*feed_wall_ns`.
int lb_descriptors(int32_t count, const int32_t *read_fds, int32_t active_write_fd,
                   int32_t samples, double gap_seconds, double feed_seconds,
                   int64_t *add_ns, int64_t *latencies, int64_t *feeds, int64_t *feed_wall_ns);

/// An idle descriptor of the descriptors workload: `eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)`,
/// unreadable while nobody writes it (its counter is 0). Returns it, or -1 with errno set.
int lb_idle_eventfd(void);

/// One process of the machine-coalescing workload: `count` repeating `ev_timer`s of
/// `interval` (s), timer i first firing `first_after[i]` s after the call, with
/// `ev_set_timeout_collect_interval(collect_interval)`, run until the monotonic instant
/// `end_ns`. Stores each wake (an `ev_check` callout: one per return from the poll) in
/// `wakes` (monotonic ns, up to `wake_capacity`; `*wake_count` is how many), and in `log`
/// each fire (up to its capacity), with `lateness[i]` (capacity as `log`'s) the fire's
/// lateness (ns) after its scheduled date (a late repeating timer counts from the last date
/// it missed, as CF does).
int lb_collect_wakes(int32_t count, double interval, const double *first_after,
                     double collect_interval, int64_t end_ns,
                     int64_t *wakes, int64_t wake_capacity, int64_t *wake_count,
                     lb_fire_log *log, int64_t *lateness);

/// Creates a loop holding `count` started `ev_timer`s (one hour away), for memory
/// measurements; NULL on failure. Release with `lb_timer_set_destroy`.
void *lb_timer_set_create(int32_t count);
void lb_timer_set_destroy(void *set);

/// Child exits: `samples` `/bin/true` children one after another, each started with
/// `posix_spawn` and watched by an `ev_child` on libev's default loop (the only loop
/// `ev_child` works on; libev reaps with `waitpid(-1)` in its SIGCHLD watcher). Stores in
/// `latencies` (when not NULL) the time from just before `posix_spawn` to the watcher's
/// callback (ns). Returns -1 with errno set when a spawn failed or no exit was seen as an
/// exit status 0.
int lb_child_exits(int32_t samples, int64_t *latencies);

/// File changes: one `ev_stat` on `path` (libev's default interval: on Linux it learns of
/// changes through inotify and re-`stat`s the file then, with no polling timer on a local
/// file system), and a writer thread that appends one byte to `path` `samples` times, each
/// after the callback saw the one before and `gap_seconds` more. Stores in `latencies` the
/// time from just before each `write` to the callback (ns). Returns -1 with errno set when
/// the file could not be opened or written.
int lb_file_changes(const char *path, int32_t samples, double gap_seconds, int64_t *latencies);

/// File change burst: one `ev_stat` on `path`; a writer thread appends `writes` bytes to
/// `path` back to back, one `write` each; the loop runs `window_seconds` from the start of
/// the burst. Stores in `callouts` how often the callback ran. Returns -1 with errno set.
int lb_file_burst(const char *path, int32_t writes, double window_seconds, int64_t *callouts);

/// Idle callouts: one `ev_idle` whose callback counts to `callouts`, then stops it and
/// breaks out of `ev_run`; with `watched_fd` ≥ 0 the loop also watches that descriptor for
/// reading (an `ev_io` that never fires: a pipe nobody writes). The run is `lb_measuredIdle`
/// (for callgrind); stores its process CPU time in `cpu_ns`.
int lb_idle(int32_t callouts, int32_t watched_fd, int64_t *cpu_ns);

#endif
