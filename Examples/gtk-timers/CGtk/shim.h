// GTK 4's C API for Swift: the headers (linked through pkg-config's gtk4), nothing more.
#include <gtk/gtk.h>
