/* memctl lowest: the lowest occupied address of one bank (tt-metal's
 * lowest_occupied_address), without a dump. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "memctl_service.h"

static const char lowest_usage[] =
    "usage: memctl lowest --device N --group G --bank B [--json]\n"
    "  group: sram (l1) or dram (global)\n"
    "  prints the lowest address of the bank that any buffer occupies (address in the\n"
    "  group's map and absolute), or that it holds nothing\n";

int memctl_cmd_lowest(const memctl_globals *g, int argc, char **argv)
{
    uint32_t device = 0, bank = 0;
    memd_kind kind = MEMD_KIND_SRAM;
    bool json = false, dev = false, grp = false, bk = false;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v;
        if (!strcmp(a, "--json")) {
            json = true;
            continue;
        }
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            fputs(lowest_usage, stdout);
            return 0;
        }
        if (strcmp(a, "--device") && strcmp(a, "--group") && strcmp(a, "--bank")) {
            fprintf(stderr, "memctl lowest: unknown option '%s'\n%s", a, lowest_usage);
            return MEMCTL_EXIT_USAGE;
        }
        if (!(v = memctl_optarg("lowest", argc, argv, &i)))
            return MEMCTL_EXIT_USAGE;
        if (!strcmp(a, "--device") && !(dev = memctl_parse_u32(v, &device) == 0))
            return memctl_bad_value("lowest", a, v, "a device id");
        if (!strcmp(a, "--group") && !(grp = memclient_kind_parse(v, &kind) == 0))
            return memctl_bad_value("lowest", a, v, "sram, l1, dram or global");
        if (!strcmp(a, "--bank") && !(bk = memctl_parse_u32(v, &bank) == 0))
            return memctl_bad_value("lowest", a, v, "a bank id");
    }
    if (!dev || !grp || !bk) {
        fprintf(stderr, "memctl lowest: --device, --group and --bank are required\n%s",
                lowest_usage);
        return MEMCTL_EXIT_USAGE;
    }
    memclient *c;
    int r = memctl_connect(g, &c);
    if (r)
        return r;
    uint64_t addr = 0, abs = 0;
    r = memclient_lowest_occupied(c, device, kind, bank, &addr, &abs);
    int code = r < 0 ? memctl_fail(c, "lowest", "cannot read the lowest occupied address", r) : 0;
    if (r >= 0 && json)
        printf("{\"device\": %" PRIu32 ", \"group\": \"%s\", \"bank\": %" PRIu32
               ", \"occupied\": %s, \"address\": %" PRIu64 ", \"absolute\": %" PRIu64 "}\n",
               device, memclient_kind_name(kind), bank, r ? "true" : "false", addr, abs);
    else if (r > 0)
        printf("device %" PRIu32 " %s bank %" PRIu32 ": lowest occupied address 0x%" PRIx64
               " (absolute 0x%" PRIx64 ")\n", device, memclient_kind_name(kind), bank, addr, abs);
    else if (r == 0)
        printf("device %" PRIu32 " %s bank %" PRIu32 ": nothing occupied\n", device,
               memclient_kind_name(kind), bank);
    memclient_disconnect(c);
    return code;
}
