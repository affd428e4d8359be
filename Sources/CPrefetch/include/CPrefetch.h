// CPrefetch: the compiler's prefetch hint, which Swift does not expose. RecordLog uses it to
// start loading the mapped rows a query is about to decode (RowBytes.prefetch), Indexes the
// column slots a residual filter is about to read (StaticColumn.prefetch).
#ifndef CPREFETCH_H
#define CPREFETCH_H

/// Asks the CPU to bring the cache line holding `address` in for a read, without waiting for it
/// and without faulting: any address is safe, a bad one is ignored.
static inline void cirrus_prefetch(const void *address) { __builtin_prefetch(address, 0, 3); }

#endif
