// The consumer's own C target named CLibev, with a header of RunLoopKit's old shim's name.
#ifndef CONSUMER_CLIBEV_H
#define CONSUMER_CLIBEV_H

/// The consumer's answer, from C.
int clibev_consumer_answer(void);

#endif
