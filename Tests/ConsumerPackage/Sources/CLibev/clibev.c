#include "clibev.h"

int clibev_consumer_answer(void) { return 42; }
