/* memd --discover: Tenstorrent accelerators as the kernel driver (tt-kmd) shows them.
 *
 * tt-kmd registers /dev/tenstorrent/N and a class device /sys/class/tenstorrent/
 * tenstorrent!N whose `device` link is the PCI function (vendor 0x1e52; the PCI device
 * id tells the chip) and whose tt_* attributes come from the ARC firmware's telemetry
 * (tt_card_type "n150", tt_serial, tt_asic_id, tt_fw_bundle_ver; absent when the
 * firmware does not report them; tt-kmd docs/sysfs-attributes.md). Each device becomes a
 * memd.yaml `tt_metal:` stanza: tt-metal's descriptor pair for its chip and the core
 * descriptor's product key for its card (tt-metal core_descriptor.hpp: the product is
 * chosen by harvested rows, which is what the card type says). */
#include <errno.h>
#include <limits.h>
#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "discover.h"
#include "json.h"

#define TT_PCI_VENDOR 0x1e52u
#define MAX_DEVICES 64

typedef struct tt_chip {
    unsigned pci_id;
    const char *arch;    /* tt-metal's name; memd.yaml's device name */
    const char *file;    /* <file>.yaml in soc_descriptors/ and core_descriptors/ */
    const char *product; /* core descriptor key when the card type says nothing */
    const char *sram_reserved; /* L1 kept by firmware (config/memd-ttmetal.yaml) */
} tt_chip;

static const tt_chip chips[] = {
    {0xfacau, "grayskull", "grayskull_120_arch", "E150", "128KiB"},
    {0x401eu, "wormhole_b0", "wormhole_b0_80_arch", "nebula_x1", "160KiB"},
    {0xb140u, "blackhole", "blackhole_140_arch", "blackhole", "160KiB"},
};

/* Card type (tt_card_type) -> the core descriptor's product key. */
static const struct {
    const char *card, *product;
} cards[] = {
    {"e75", "E75"},         {"e150", "E150"},       {"n150", "nebula_x1"},
    {"n300", "nebula_x2"},  {"galaxy", "galaxy"},   {"tg", "galaxy"},
    {"p100", "blackhole"},  {"p100a", "blackhole"}, {"p150", "blackhole"},
    {"p150a", "blackhole"}, {"p150b", "blackhole"}, {"p150c", "blackhole"},
    {"p300", "blackhole"},
};

typedef struct found {
    unsigned index;
    char dev[PATH_MAX];
    bool dev_present;
    char pci[64];
    unsigned vendor, pci_id;
    const tt_chip *chip;
    char card[32], serial[40], asic[40], firmware[40];
    const char *product;
    bool product_guessed;
    char soc[PATH_MAX], core[PATH_MAX];
    bool descriptors_found;
} found;

/* One sysfs attribute's first line, "" when absent. */
static void attr(const char *dir, const char *name, char *buf, size_t len)
{
    char path[PATH_MAX];
    buf[0] = '\0';
    if (snprintf(path, sizeof path, "%s/%s", dir, name) >= (int)sizeof path)
        return; /* too long for a path: absent */
    FILE *f = fopen(path, "re");
    if (!f)
        return;
    if (fgets(buf, (int)len, f))
        buf[strcspn(buf, "\r\n")] = '\0';
    else
        buf[0] = '\0';
    fclose(f);
}

static unsigned hex_attr(const char *dir, const char *name)
{
    char v[32];
    attr(dir, name, v, sizeof v);
    return (unsigned)strtoul(v, NULL, 16);
}

static bool exists(const char *path)
{
    struct stat sb;
    return stat(path, &sb) == 0;
}

/* The descriptor pair for a chip under base: a tt-metal tree, its tt_metal/ folder, or a
 * flat folder of soc_<file>.yaml and core_<file>.yaml (as ../shared/data keeps them). */
static void descriptors(const char *base, const tt_chip *c, found *d)
{
    /* {soc folder, core folder, soc prefix, core prefix} below base */
    static const char *const layouts[][4] = {
        {"/tt_metal/soc_descriptors/", "/tt_metal/core_descriptors/", "", ""},
        {"/soc_descriptors/", "/core_descriptors/", "", ""},
        {"/", "/", "soc_", "core_"},
    };
    const char *root = base && *base ? base : "$TT_METAL_HOME";
    for (size_t i = 0; i < sizeof layouts / sizeof *layouts; i++) {
        const char *const *l = layouts[i];
        snprintf(d->soc, sizeof d->soc, "%s%s%s%s.yaml", root, l[0], l[2], c->file);
        snprintf(d->core, sizeof d->core, "%s%s%s%s.yaml", root, l[1], l[3], c->file);
        char soc[PATH_MAX], core[PATH_MAX];
        if (base && *base && realpath(d->soc, soc) && realpath(d->core, core)) {
            memcpy(d->soc, soc, sizeof soc);
            memcpy(d->core, core, sizeof core);
            d->descriptors_found = true;
            return;
        }
    }
    /* Not found: name where a tt-metal tree keeps them. */
    snprintf(d->soc, sizeof d->soc, "%s%s%s.yaml", root, layouts[0][0], c->file);
    snprintf(d->core, sizeof d->core, "%s%s%s.yaml", root, layouts[0][1], c->file);
}

static void probe(const memd_discover_opts *o, const char *classdir, unsigned index, found *d)
{
    char dir[PATH_MAX], link[PATH_MAX];
    d->index = index;
    snprintf(d->dev, sizeof d->dev, "%s/tenstorrent/%u", o->devfs, index);
    d->dev_present = exists(d->dev);
    /* A path too long for PATH_MAX reads as absent attributes. */
    if (snprintf(dir, sizeof dir, "%s/tenstorrent!%u", classdir, index) >= (int)sizeof dir ||
        snprintf(link, sizeof link, "%s/device", dir) >= (int)sizeof link)
        return;
    char target[PATH_MAX];
    ssize_t n = readlink(link, target, sizeof target - 1);
    if (n > 0) {
        target[n] = '\0';
        const char *base = strrchr(target, '/');
        if (snprintf(d->pci, sizeof d->pci, "%s", base ? base + 1 : target) >= (int)sizeof d->pci)
            d->pci[0] = '\0';
    }
    d->vendor = hex_attr(link, "vendor");
    d->pci_id = hex_attr(link, "device");
    for (size_t i = 0; i < sizeof chips / sizeof *chips; i++)
        if (d->vendor == TT_PCI_VENDOR && chips[i].pci_id == d->pci_id)
            d->chip = &chips[i];
    attr(dir, "tt_card_type", d->card, sizeof d->card);
    attr(dir, "tt_serial", d->serial, sizeof d->serial);
    attr(dir, "tt_asic_id", d->asic, sizeof d->asic);
    attr(dir, "tt_fw_bundle_ver", d->firmware, sizeof d->firmware);
    if (!d->chip)
        return;
    d->product = d->chip->product;
    d->product_guessed = true;
    for (size_t i = 0; i < sizeof cards / sizeof *cards; i++)
        if (!strcasecmp(d->card, cards[i].card)) {
            d->product = cards[i].product;
            d->product_guessed = false;
        }
    descriptors(o->descriptors ? o->descriptors : getenv("TT_METAL_HOME"), d->chip, d);
}

static int cmp_found(const void *a, const void *b)
{
    unsigned x = ((const found *)a)->index, y = ((const found *)b)->index;
    return (x > y) - (x < y);
}

/* tenstorrent!N entries of the class folder, in N order. */
static int scan(const memd_discover_opts *o, const char *classdir, found *devs, size_t *n,
                FILE *errout)
{
    DIR *dir = opendir(classdir);
    *n = 0;
    if (!dir) {
        if (errno == ENOENT)
            return 0; /* no driver loaded: no devices */
        fprintf(errout, "memd --discover: %s: %s\n", classdir, strerror(errno));
        return -1;
    }
    struct dirent *de;
    while ((de = readdir(dir))) {
        char *end;
        if (strncmp(de->d_name, "tenstorrent!", 12) || !de->d_name[12])
            continue;
        unsigned long idx = strtoul(de->d_name + 12, &end, 10);
        if (*end || idx > UINT_MAX)
            continue;
        if (*n == MAX_DEVICES) {
            fprintf(errout, "memd --discover: more than %d devices: the rest are left out\n",
                    MAX_DEVICES);
            break;
        }
        probe(o, classdir, (unsigned)idx, &devs[(*n)++]);
    }
    closedir(dir);
    qsort(devs, *n, sizeof *devs, cmp_found);
    return 0;
}

static void put_yaml(FILE *out, const char *classdir, const found *devs, size_t n)
{
    fprintf(out, "# memd --discover: %zu Tenstorrent device%s under %s\n", n,
            n == 1 ? "" : "s", classdir);
    fputs(n ? "devices:\n" : "devices: []\n", out);
    unsigned id = 0;
    for (size_t i = 0; i < n; i++) {
        const found *d = &devs[i];
        fprintf(out, "  # %s%s: %s, PCI %s (%04x:%04x)", d->dev,
                d->dev_present ? "" : " (no device node)", d->card[0] ? d->card : "card type unknown",
                d->pci[0] ? d->pci : "?", d->vendor, d->pci_id);
        if (d->serial[0])
            fprintf(out, ", serial %s", d->serial);
        if (d->firmware[0])
            fprintf(out, ", firmware %s", d->firmware);
        fputc('\n', out);
        if (!d->chip) {
            fputs("  # not a chip memd knows (no descriptor pair for it): left out\n", out);
            continue;
        }
        if (d->product_guessed)
            fprintf(out, "  # the card type does not say the product: %s is the chip's usual one\n",
                    d->product);
        if (!d->descriptors_found)
            fputs("  # descriptor files not found: point --descriptors or $TT_METAL_HOME at a "
                  "tt-metal tree\n", out);
        fprintf(out, "  - id: %u\n    name: %s_%u\n    tt_metal:\n"
                     "      soc_descriptor: %s\n      core_descriptor: %s\n"
                     "      product: %s\n      hw_cqs: 1\n    sram:\n      reserved: %s\n",
                id++, d->chip->arch, d->index, d->soc, d->core, d->product,
                d->chip->sram_reserved);
    }
}

static void json_field(FILE *out, const char *key, const char *val, bool comma)
{
    fprintf(out, "\"%s\":", key);
    memd_json_str(out, val);
    if (comma)
        fputc(',', out);
}

static void put_json(FILE *out, const char *classdir, const found *devs, size_t n)
{
    fputs("{", out);
    json_field(out, "class", classdir, true);
    fputs("\"devices\":[", out);
    for (size_t i = 0; i < n; i++) {
        const found *d = &devs[i];
        char ids[16];
        fprintf(out, "%s{\"index\":%u,", i ? "," : "", d->index);
        json_field(out, "dev", d->dev, true);
        fprintf(out, "\"dev_present\":%s,", d->dev_present ? "true" : "false");
        json_field(out, "pci", d->pci, true);
        snprintf(ids, sizeof ids, "0x%04x", d->vendor);
        json_field(out, "vendor", ids, true);
        snprintf(ids, sizeof ids, "0x%04x", d->pci_id);
        json_field(out, "device", ids, true);
        json_field(out, "card_type", d->card, true);
        json_field(out, "serial", d->serial, true);
        json_field(out, "asic_id", d->asic, true);
        json_field(out, "firmware", d->firmware, true);
        if (d->chip) {
            json_field(out, "arch", d->chip->arch, true);
            json_field(out, "product", d->product, true);
            fprintf(out, "\"product_guessed\":%s,", d->product_guessed ? "true" : "false");
            json_field(out, "soc_descriptor", d->soc, true);
            json_field(out, "core_descriptor", d->core, true);
            fprintf(out, "\"descriptors_found\":%s,", d->descriptors_found ? "true" : "false");
        }
        fprintf(out, "\"supported\":%s}", d->chip ? "true" : "false");
    }
    fputs("]}\n", out);
}

int memd_discover(const memd_discover_opts *o, FILE *out, FILE *errout)
{
    char classdir[PATH_MAX];
    snprintf(classdir, sizeof classdir, "%s/class/tenstorrent", o->sysfs);
    found *devs = calloc(MAX_DEVICES, sizeof *devs);
    size_t n = 0;
    if (!devs) {
        fputs("memd --discover: out of memory\n", errout);
        return 1;
    }
    int rc = scan(o, classdir, devs, &n, errout);
    if (rc == 0) {
        for (size_t i = 0; i < n; i++) {
            if (!devs[i].chip)
                fprintf(errout, "memd --discover: %s: PCI id %04x:%04x is no Tenstorrent chip "
                                "memd knows\n", devs[i].dev, devs[i].vendor, devs[i].pci_id);
            else if (!devs[i].descriptors_found)
                fprintf(errout, "memd --discover: %s: no descriptor pair for %s (looked under %s)\n",
                        devs[i].dev, devs[i].chip->arch,
                        o->descriptors ? o->descriptors : "$TT_METAL_HOME");
        }
        (o->json ? put_json : put_yaml)(out, classdir, devs, n);
    }
    free(devs);
    return rc < 0 || fflush(out) != 0 ? 1 : 0;
}
