/* memd engine — a 64-bit content hash (the XXH64 algorithm: fast, well mixed, with
 * published test vectors) for cache keys such as the plan cache's. Not cryptographic:
 * callers that must not confuse two inputs compare the inputs themselves on a hit.
 * Pure: no state, no I/O. */
#ifndef MEMD_ENGINE_DIGEST_H
#define MEMD_ENGINE_DIGEST_H

#include <stddef.h>
#include <stdint.h>

uint64_t memd_digest64(const void *data, size_t len, uint64_t seed);

#endif
