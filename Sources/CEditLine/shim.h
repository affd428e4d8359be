// libedit's readline-compatible API (Debian: libedit-dev). Only the REPL's LineEditor uses it.
#include <stdio.h>
#include <stdlib.h>
#include <editline/readline.h>

// Accessors for libedit's globals, so Swift code never touches shared mutable C state directly
// (Swift 6 rejects references to C global variables as not concurrency-safe).
static inline void cirrus_el_set_completion(rl_completion_func_t *f) { rl_attempted_completion_function = f; }
static inline const char *cirrus_el_line_buffer(void) { return rl_line_buffer; }
