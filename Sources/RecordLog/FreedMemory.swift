// FreedMemory: giving memory the process freed back to the system. glibc's allocator keeps
// freed small blocks in its heaps for reuse, so after a phase that allocated and freed many of
// them (a bulk load's sort buffer: millions of payload arrays) the resident set stays at that
// phase's peak although nothing uses it — and the large arrays of the next phase (an index
// build) are mapped beside it instead of reusing it.

import CPrefetch

/// The process's freed heap memory.
public enum FreedMemory {
    /// Returns the free pages of the allocator's heaps to the system (`malloc_trim(0)` with
    /// glibc; nothing elsewhere). Costs a walk of the free lists: call it between phases, not in
    /// a loop.
    public static func returnToSystem() { cirrus_malloc_trim() }
}
