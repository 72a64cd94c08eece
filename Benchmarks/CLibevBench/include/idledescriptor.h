// Idle descriptors for the descriptors workload: one descriptor each, never readable.
#ifndef IDLEDESCRIPTOR_H
#define IDLEDESCRIPTOR_H

/// `eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)`: a descriptor that stays unreadable while nobody
/// writes it (its counter is 0). Returns the descriptor, or -1 with errno set.
int lb_idle_eventfd(void);

#endif
