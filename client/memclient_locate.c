/* libmemclient: where a byte of a buffer is (memclient_locate), from what the client
 * already holds: the buffer's page size and bank count and its banks' addresses. */
#include <errno.h>

#include "memclient_internal.h"

int memclient_locate(const memclient_buffer *buf, const memclient_bank *banks, size_t nbanks,
                     uint64_t offset, memclient_location *out)
{
    if (!buf || !banks || !out)
        return memclient_fail(-EINVAL, "memclient_locate: NULL argument");
    if (buf->banks == 0 || buf->page_size == 0 || nbanks < buf->banks)
        return memclient_fail(-EINVAL, "memclient_locate: buffer %llu spreads over %u banks "
                              "in pages of %llu bytes; %zu banks given",
                              (unsigned long long)buf->handle, buf->banks,
                              (unsigned long long)buf->page_size, nbanks);
    uint64_t page = offset / buf->page_size, row = page / buf->banks;
    /* The rows every bank reserves: size_per_bank is a whole number of pages. */
    if (row >= buf->size_per_bank / buf->page_size)
        return memclient_fail(-ERANGE, "memclient_locate: offset %llu is past buffer %llu "
                              "(%llu pages of %llu bytes in each of %u banks)",
                              (unsigned long long)offset, (unsigned long long)buf->handle,
                              (unsigned long long)(buf->size_per_bank / buf->page_size),
                              (unsigned long long)buf->page_size, buf->banks);
    const memclient_bank *b = &banks[page % buf->banks];
    uint64_t in_bank = row * buf->page_size + offset % buf->page_size;
    *out = (memclient_location){.bank = b->bank, .address = b->address + in_bank,
                                .absolute = b->absolute + in_bank, .page = page,
                                .logical_x = b->logical_x, .logical_y = b->logical_y,
                                .noc_x = b->noc_x, .noc_y = b->noc_y};
    return 0;
}
