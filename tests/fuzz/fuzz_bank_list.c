/* Fuzz target: the bank-list syntax ("0-3,8", banklist.h). Whatever it accepts must be
 * strictly increasing and below the limit, counting alone must agree with filling, and
 * printing the ids back as ranges must parse to the same ids. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "banklist.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define LIMIT 4096u

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 512)
        return 0;
    char *s = malloc(size + 1);
    if (!s)
        abort();
    memcpy(s, data, size);
    s[size] = '\0';
    static uint32_t ids[LIMIT], again[LIMIT];
    uint32_t n, m, bad;
    int rc = memd_parse_bank_list(s, LIMIT, ids, LIMIT, &n, &bad);
    uint32_t counted;
    if (memd_parse_bank_list(s, LIMIT, NULL, 0, &counted, &bad) != rc)
        abort();
    if (rc == 0) {
        if (counted != n || n == 0)
            abort();
        for (uint32_t i = 0; i < n; i++)
            if (ids[i] >= LIMIT || (i && ids[i] <= ids[i - 1]))
                abort();
        /* Round trip through the canonical text. */
        char *text = malloc((size_t)n * 12 + 1);
        if (!text)
            abort();
        size_t used = 0;
        for (uint32_t i = 0; i < n;) {
            uint32_t j = i + 1;
            while (j < n && ids[j] == ids[j - 1] + 1)
                j++;
            used += (size_t)sprintf(text + used, j - i > 1 ? "%s%u-%u" : "%s%u", i ? "," : "",
                                    ids[i], ids[j - 1]);
            i = j;
        }
        if (memd_parse_bank_list(text, LIMIT, again, LIMIT, &m, &bad) != 0 || m != n ||
            memcmp(ids, again, sizeof(*ids) * n) != 0)
            abort();
        free(text);
    } else if (bad > size) {
        abort(); /* the offending offset lies inside the input */
    }
    free(s);
    return 0;
}
