// The consumer's own GLib module, named as rhx/SwiftGLib names its.
#include <glib.h>
