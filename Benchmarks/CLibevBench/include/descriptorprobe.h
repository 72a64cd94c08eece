// The raw-libev side of descriptor-probe: the program a new user writes in C against libev
// for "8,000 idle pipes plus one active one", next to the Swift one in descriptor-probe.
#ifndef DESCRIPTORPROBE_H
#define DESCRIPTORPROBE_H

#include <stdint.h>

/// Watches each of `count` read ends with an `ev_io` (EV_READ) whose callback reads a byte
/// and, when it got one, counts the call and writes a byte to `active_write_fd`; writes the
/// first byte, then `ev_run(loop, 0)` until an `ev_timer` of `seconds` breaks the loop.
/// `default_loop` nonzero: `ev_default_loop(0)`, else `ev_loop_new(EVFLAG_AUTO)`. A first
/// run of `warmup_seconds` is not counted (the measured run is `dp_libev_measuredRun`, for
/// callgrind's `--toggle-collect='*measuredRun*'`). Stores the counted calls, the measured
/// run's wall time (ns) and the time to init and start all watchers (ns). Returns 0 or -1.
int dp_libev_feed(int32_t count, const int32_t *read_fds, int32_t active_write_fd, int default_loop,
                  double warmup_seconds, double seconds, int64_t *calls, int64_t *wall_ns, int64_t *add_ns);

#endif
