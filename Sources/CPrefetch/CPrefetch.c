// The target's code is the inline function in include/CPrefetch.h; SwiftPM needs a source file.
#include "CPrefetch.h"
