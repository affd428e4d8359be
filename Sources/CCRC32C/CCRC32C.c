// CRC-32C with the CPU's instruction (see include/CCRC32C.h).
//
// The reflected polynomial 0x82F63B78 is what both instructions compute, so the running value is
// the same as CirrusIO's table-driven CRC32C.update: the two are interchangeable mid-stream (a
// test feeds both the same pieces). Eight bytes per instruction, unaligned loads through memcpy
// (one instruction on both targets), the tail byte by byte.
//
// The three-stream form: the CRC of A‖B‖C from running value c is, the update being linear
// without the initial and final xors, shift(shift(crc(c, A)) ^ crc(0, B)) ^ crc(0, C), where
// shift feeds 128 zero bytes (|B| = |C| = 128) — a table lookup per byte of the value.
#include "CCRC32C.h"

#include <string.h>

static inline uint32_t shift128(uint32_t c, const uint32_t *t) {
    return t[c & 0xff] ^ t[256 + ((c >> 8) & 0xff)] ^ t[512 + ((c >> 16) & 0xff)] ^ t[768 + (c >> 24)];
}

// One body for both targets: CIRRUS_CRC_TARGET enables the instruction for the functions that
// use it (the rest of the binary runs where it is missing: the caller asks
// cirrus_crc32c_hardware first), CRC_U64 / CRC_U8 fold eight bytes / one byte into the value.
#if defined(__x86_64__)

#define CIRRUS_CRC_TARGET __attribute__((target("sse4.2")))
#define CRC_U64(c, w) ((uint32_t)__builtin_ia32_crc32di((c), (w)))
#define CRC_U8(c, b) __builtin_ia32_crc32qi((c), (b))

int cirrus_crc32c_hardware(void) { return __builtin_cpu_supports("sse4.2") ? 1 : 0; }

#elif defined(__aarch64__) && defined(__linux__)

#include <sys/auxv.h>
#ifndef HWCAP_CRC32
#define HWCAP_CRC32 (1 << 7)
#endif

#define CIRRUS_CRC_TARGET __attribute__((target("crc")))
#define CRC_U64(c, w) __builtin_arm_crc32cd((c), (w))
#define CRC_U8(c, b) __builtin_arm_crc32cb((c), (b))

int cirrus_crc32c_hardware(void) { return (getauxval(AT_HWCAP) & HWCAP_CRC32) ? 1 : 0; }

#endif

#if defined(CIRRUS_CRC_TARGET)

CIRRUS_CRC_TARGET uint32_t cirrus_crc32c_update(uint32_t crc, const void *bytes, size_t count) {
    const unsigned char *p = bytes;
    while (count >= 8) {
        uint64_t word;
        memcpy(&word, p, 8);
        crc = CRC_U64(crc, word);
        p += 8;
        count -= 8;
    }
    while (count > 0) {
        crc = CRC_U8(crc, *p);
        p += 1;
        count -= 1;
    }
    return crc;
}

CIRRUS_CRC_TARGET uint32_t cirrus_crc32c_update3(
    uint32_t crc, const void *bytes, size_t count, const uint32_t *shift) {
    const unsigned char *p = bytes;
    const size_t s = CIRRUS_CRC32C_STREAM;
    while (count >= 3 * s) {
        uint32_t c0 = crc, c1 = 0, c2 = 0;
        for (size_t i = 0; i < s; i += 8) {
            uint64_t w0, w1, w2;
            memcpy(&w0, p + i, 8);
            memcpy(&w1, p + s + i, 8);
            memcpy(&w2, p + 2 * s + i, 8);
            c0 = CRC_U64(c0, w0);
            c1 = CRC_U64(c1, w1);
            c2 = CRC_U64(c2, w2);
        }
        crc = shift128(shift128(c0, shift) ^ c1, shift) ^ c2;
        p += 3 * s;
        count -= 3 * s;
    }
    return cirrus_crc32c_update(crc, p, count);
}

#else

int cirrus_crc32c_hardware(void) { return 0; }

uint32_t cirrus_crc32c_update(uint32_t crc, const void *bytes, size_t count) {
    (void)bytes;
    (void)count;
    return crc;
}

uint32_t cirrus_crc32c_update3(uint32_t crc, const void *bytes, size_t count, const uint32_t *shift) {
    (void)bytes;
    (void)count;
    (void)shift;
    return crc;
}

#endif
