// CCRC32C: CRC-32C (Castagnoli) with the CPU's own instruction — SSE 4.2's `crc32` on x86-64,
// the CRC extension's `crc32c` on 64-bit Arm — which Swift does not expose. CirrusIO's CRC32C
// calls it when the CPU has the instruction and uses its table-driven code otherwise.
#ifndef CCRC32C_H
#define CCRC32C_H

#include <stddef.h>
#include <stdint.h>

/// 1 when this CPU has a CRC-32C instruction `cirrus_crc32c_update` uses, else 0.
int cirrus_crc32c_hardware(void);

/// Feeds `count` bytes at `bytes` into the running value `crc` (no initial or final xor: the
/// caller's convention) with the CPU's instruction. Call it only after `cirrus_crc32c_hardware()`
/// returned 1 (on a CPU without the instruction it would fault); on other targets it returns
/// `crc` unchanged.
uint32_t cirrus_crc32c_update(uint32_t crc, const void *bytes, size_t count);

#endif
