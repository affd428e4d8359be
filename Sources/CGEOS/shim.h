// CGEOS: the C API of GEOS (libgeos_c), reentrant `_r` functions only are used by Indexes.
#ifndef CIRRUS_CGEOS_SHIM_H
#define CIRRUS_CGEOS_SHIM_H
#include <geos_c.h>
#endif
