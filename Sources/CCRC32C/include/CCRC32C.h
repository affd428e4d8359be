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

/// The length of each of the three streams `cirrus_crc32c_update3` runs side by side.
#define CIRRUS_CRC32C_STREAM 128

/// `cirrus_crc32c_update`, three times as fast on long buffers: runs of 3 × 128 bytes are fed to
/// three independent CRCs side by side (the instruction takes three cycles to give its result
/// but can start one every cycle), which are then combined. `shift` is the table of the linear
/// map "feed 128 zero bytes" on a running value, by byte of the value: entry 256 × k + b is the
/// running value after 128 zero bytes starting from b << 8k (k = 0…3). The same precondition as
/// `cirrus_crc32c_update`.
uint32_t cirrus_crc32c_update3(uint32_t crc, const void *bytes, size_t count, const uint32_t *shift);

#endif
