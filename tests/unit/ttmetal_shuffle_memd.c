/* memd's side of ttmetal_shuffle_ref.cpp: prints memd's tt-metal L1 bank remap for each
 * bank count given, in the same format ("N: id id ..."), so that the two can be diffed.
 * NOT BUILT by meson (the Check suite banks-ttmetal holds the vectors it checks); build by
 * hand from the checkout after `ninja -C build`:
 *     cc -std=c17 -O2 -Isoc -Iengine/alloc -Icommon -Iinclude tests/unit/ttmetal_shuffle_memd.c \
 *        build/soc/libmemd-soc.a build/engine/alloc/libmemd-alloc.a \
 *        build/common/libmemd-util.a build/common/libmemd-common.a \
 *        -lyaml -o /tmp/memd-remap
 *     /tmp/memd-remap libc++ 1-256        (or libstdc++)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ttmetal.h"

int main(int argc, char **argv)
{
    void (*remap)(uint32_t *, uint32_t) = NULL;
    if (argc > 1 && !strcmp(argv[1], "libc++"))
        remap = memd_ttmetal_libcxx_remap;
    else if (argc > 1 && !strcmp(argv[1], "libstdc++"))
        remap = memd_ttmetal_default_remap;
    for (int i = 2; remap && i < argc; i++) {
        char *end;
        unsigned long a = strtoul(argv[i], &end, 10), b = a;
        if (*end == '-')
            b = strtoul(end + 1, &end, 10);
        if (*end || a == 0 || b < a || b > MEMD_MAX_BANKS) {
            remap = NULL;
            break;
        }
        uint32_t *ids = malloc(sizeof(uint32_t) * b);
        for (unsigned long n = a; ids && n <= b; n++) {
            remap(ids, (uint32_t)n);
            printf("%lu:", n);
            for (unsigned long k = 0; k < n; k++)
                printf(" %u", ids[k]);
            printf("\n");
        }
        free(ids);
    }
    if (!remap) {
        fprintf(stderr, "usage: %s libc++|libstdc++ N|A-B ... (bank counts, 1 to %u)\n", argv[0],
                MEMD_MAX_BANKS);
        return 2;
    }
    return 0;
}
