#define _GNU_SOURCE
#include "clibev.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

void clibev_io_init(ev_io *w, clibev_callback cb, int fd, int events) {
    ev_io_init(w, (void (*)(struct ev_loop *, ev_io *, int))cb, fd, events);
}

void clibev_async_init(ev_async *w, clibev_callback cb) {
    ev_async_init(w, (void (*)(struct ev_loop *, ev_async *, int))cb);
}

void clibev_signal_init(ev_signal *w, clibev_callback cb, int signum) {
    ev_signal_init(w, (void (*)(struct ev_loop *, ev_signal *, int))cb, signum);
}

void clibev_watcher_set_data(void *w, void *data) { ((ev_watcher *)w)->data = data; }
void *clibev_watcher_data(void *w) { return ((ev_watcher *)w)->data; }
int clibev_is_active(void *w) { return ev_is_active((ev_watcher *)w); }
int clibev_async_pending(ev_async *w) { return ev_async_pending(w); }

size_t clibev_io_size(void) { return sizeof(ev_io); }
size_t clibev_async_size(void) { return sizeof(ev_async); }
size_t clibev_signal_size(void) { return sizeof(ev_signal); }

int clibev_timerfd_create(int realtime) {
    return timerfd_create(realtime ? CLOCK_REALTIME : CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
}

int clibev_timerfd_arm(int fd, int64_t deadline_ns, int cancel_on_set) {
    struct itimerspec spec = {0};
    if (deadline_ns >= 0) {
        // An all-zero it_value disarms, so a deadline at exactly 0 ns becomes 1 ns.
        int64_t ns = deadline_ns > 0 ? deadline_ns : 1;
        spec.it_value.tv_sec = ns / 1000000000;
        spec.it_value.tv_nsec = ns % 1000000000;
    }
    int flags = TFD_TIMER_ABSTIME | (cancel_on_set ? TFD_TIMER_CANCEL_ON_SET : 0);
    return timerfd_settime(fd, flags, &spec, NULL);
}

int clibev_timerfd_consume(int fd) {
    uint64_t expirations;
    ssize_t n = read(fd, &expirations, sizeof expirations);
    if (n == (ssize_t)sizeof expirations) return 1;
    if (errno == EAGAIN) return 0;
    if (errno == ECANCELED) return -2;
    return -1;
}

int clibev_eventfd_consume(int fd) {
    uint64_t count;
    ssize_t n;
    do {
        n = read(fd, &count, sizeof count);
    } while (n == -1 && errno == EINTR);
    if (n == (ssize_t)sizeof count) return 1;
    return errno == EAGAIN ? 0 : -1;
}

int clibev_unblock_signal(int signum) {
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, signum);
    return pthread_sigmask(SIG_UNBLOCK, &set, NULL);
}

int64_t clibev_monotonic_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int64_t clibev_realtime_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static _Thread_local uint64_t thread_id = 0;

uint64_t clibev_thread_id(void) { return thread_id; }

void clibev_set_thread_id(uint64_t id) { thread_id = id; }

int clibev_ticks_drive_monotonic(void) {
#if defined(__x86_64__)
    const char *expected = "tsc";
#elif defined(__aarch64__)
    const char *expected = "arch_sys_counter";
#else
    return 0;
#endif
    FILE *file = fopen("/sys/devices/system/clocksource/clocksource0/current_clocksource", "r");
    if (!file) return 0;
    char name[64] = {0};
    int read = fscanf(file, "%63s", name);
    fclose(file);
    return read == 1 && strcmp(name, expected) == 0;
}

int clibev_is_main_thread(void) { return (pid_t)syscall(SYS_gettid) == getpid(); }
