// CPrefetch: the compiler's prefetch hint, which Swift does not expose. RecordLog uses it to
// start loading the mapped rows a query is about to decode (RowBytes.prefetch), Indexes the
// column slots a residual filter is about to read (StaticColumn.prefetch). And relaxed atomic
// operations on words in plain memory, which Swift's `Atomic` does not offer (it must own its
// storage): RecordLog's bitmap of rows whose checksum a process has checked (RowSums.Seen). And
// glibc's malloc_trim, which its Swift module does not import (RecordLog's FreedMemory).
#ifndef CPREFETCH_H
#define CPREFETCH_H

#include <stdint.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

/// Asks the CPU to bring the cache line holding `address` in for a read, without waiting for it
/// and without faulting: any address is safe, a bad one is ignored.
static inline void cirrus_prefetch(const void *address) { __builtin_prefetch(address, 0, 3); }

/// The word at `p`, read atomically with no ordering (relaxed).
static inline uint64_t cirrus_load_relaxed(const uint64_t *p) { return __atomic_load_n(p, __ATOMIC_RELAXED); }

/// Sets the bits of `bits` in the word at `p`, atomically with no ordering (relaxed).
static inline void cirrus_or_relaxed(uint64_t *p, uint64_t bits) { __atomic_fetch_or(p, bits, __ATOMIC_RELAXED); }

/// Returns the allocator's free heap pages to the system (glibc's malloc_trim(0)); nothing with
/// another C library.
static inline void cirrus_malloc_trim(void) {
#ifdef __GLIBC__
    malloc_trim(0);
#endif
}

#endif
