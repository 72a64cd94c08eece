// Idle descriptors for the descriptors workload (idledescriptor.h).
#include "idledescriptor.h"

#include <sys/eventfd.h>

int lb_idle_eventfd(void) { return eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC); }
