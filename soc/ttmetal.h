/* memd soc — tt-metal's SoC descriptor + core descriptor pair -> memd bank groups.
 *
 * DRAM: one bank per entry of `dram`, bank size `dram_bank_size`, offsets
 * `dram_address_offsets` (all 0 when absent). L1: one bank per core of the product's
 * `compute_with_storage_grid_range`, plus worker_l1_size / bank_size banks per
 * `storage_cores` entry; bank size `l1_bank_size` when given, else worker_l1_size minus
 * memd's reserved size. Compute-core banks sit at the top of L1 (offset worker_l1_size -
 * bank_size); storage core bank j at worker_l1_size - (j + 1) * bank_size. L1 region
 * `reserved` covers every bank address that would fall below `reserved` bytes of L1 in
 * some bank (left out when no bank reaches that low); `buffers` is the rest.
 * Unknown keys are ignored (the files carry much more than memory).
 * `harvested_workers` is ignored too: the core descriptor's grid is already logical,
 * i.e. after harvesting.
 *
 * Bank ids and cores: L1 bank ids are the ids tt-metal's L1 allocator gives. It scans
 * the logical worker grid row by row (y, then x); each compute core (of the compute grid)
 * is one bank, each storage core worker_l1_size / bank_size banks (the first at the
 * bottom of its L1: bank j of the core at offset j * bank_size); the bank at scan
 * position i then gets the id remap[i]: by default tt-metal's own shuffle as libstdc++
 * computes it (memd_ttmetal_default_remap), or as libc++ does for a tt-metal built
 * against it (memd_ttmetal_libcxx_remap), or the l1_bank_remap a runtime passes to
 * CreateDevice (memd.yaml: tt_metal.l1_bank_remap: default / libstdc++, libc++, a list,
 * or `identity`). DRAM bank i is `dram`
 * entry i. Each bank gets its logical and NOC coordinates. */
#ifndef MEMD_SOC_TTMETAL_H
#define MEMD_SOC_TTMETAL_H

#include "yaml_doc.h"

#define MEMD_TTMETAL_MAX_AXIS 64    /* NOC rows / columns of workers we keep */
#define MEMD_TTMETAL_MAX_STORAGE 64 /* storage cores whose coordinates we keep */

typedef struct memd_ttmetal_soc {
    char arch[MEMD_NAME_MAX];   /* arch_name, lower-cased; "" if absent */
    uint32_t dram_banks;
    uint64_t dram_bank_size;
    int64_t *dram_offsets;      /* dram_banks entries, owned */
    uint64_t worker_l1_size;
    /* Core coordinates (for bank ids and dumps; absent keys leave them unknown): the
     * NOC column of logical x is noc_x[x], the row of logical y is noc_y[y] (the
     * distinct coordinates of `functional_workers`, in order: harvested rows are not
     * there), and the NOC core of DRAM bank i is dram_noc[i] (the first endpoint of
     * `dram` entry i; MEMD_NO_CORE when not written as "x-y"). */
    uint32_t nnoc_x, nnoc_y;
    uint16_t noc_x[MEMD_TTMETAL_MAX_AXIS], noc_y[MEMD_TTMETAL_MAX_AXIS];
    uint16_t (*dram_noc)[2];    /* dram_banks entries, owned */
} memd_ttmetal_soc;

typedef struct memd_ttmetal_core {
    uint32_t compute_cores;     /* cores of compute_with_storage_grid_range */
    uint32_t storage_cores;     /* entries of storage_cores */
    uint64_t l1_bank_size;      /* 0: not given */
    int64_t grid_start[2], grid_end[2]; /* the compute grid, logical [x, y] */
    /* The first MEMD_TTMETAL_MAX_STORAGE storage cores, logical [x, y] as written
     * (negative: from the end of the grid). */
    int64_t storage_xy[MEMD_TTMETAL_MAX_STORAGE][2];
} memd_ttmetal_core;

int memd_ttmetal_parse_soc(const char *file, const char *buf, size_t len, memd_ttmetal_soc *out,
                           memd_error *err);
void memd_ttmetal_soc_free(memd_ttmetal_soc *s);

/* product: top-level key (e.g. "E150", "galaxy"); hw_cqs: the key below it.
 * worker_l1_size (from the SoC descriptor) bounds l1_bank_size. */
int memd_ttmetal_parse_core(const char *file, const char *buf, size_t len, const char *product,
                            uint32_t hw_cqs, uint64_t worker_l1_size, memd_ttmetal_core *out,
                            memd_error *err);

/* What memd.yaml can set beside the two files. */
typedef struct memd_ttmetal_opts {
    const char *product;        /* the core descriptor's top-level key, e.g. "E150", "galaxy" */
    uint32_t hw_cqs;            /* the key below it */
    uint64_t sram_reserved;     /* L1 bytes kept by firmware and kernels */
    uint64_t sram_alignment;    /* 0: tt-metal's L1_ALIGNMENT */
    uint64_t dram_alignment;    /* 0: tt-metal's DRAM_ALIGNMENT */
    const char *arch;           /* NULL: the SoC descriptor's arch_name */
    const char *name;           /* NULL: "<arch>-<product>" ("tt" without an arch) */
    /* Where sram_reserved was given, so that the L1 errors it causes point there
     * (NULL file: at the core descriptor, without a position). */
    const char *reserved_file;
    const memd_ynode *reserved_node;
    /* L1 bank ids: tt-metal's default shuffle (as libstdc++ or libc++ computes it), the
     * identity, or remap[0..nremap) (bank id of each scan position; must be a
     * permutation of the banks), given at remap_file / remap_node for errors. */
    enum {
        MEMD_TTMETAL_REMAP_DEFAULT, /* libstdc++'s shuffle */
        MEMD_TTMETAL_REMAP_IDENTITY,
        MEMD_TTMETAL_REMAP_LIST,
        MEMD_TTMETAL_REMAP_LIBCXX,  /* libc++'s shuffle */
    } remap;
    const uint32_t *remap_list;
    uint32_t nremap;
    const char *remap_file;
    const memd_ynode *remap_node;
} memd_ttmetal_opts;

/* tt-metal's default L1 bank remap for n banks (ttmetal_remap.c): ids[i] is the bank id
 * of scan position i, as std::shuffle with std::default_random_engine(0) leaves 0..n-1
 * under libstdc++. */
void memd_ttmetal_default_remap(uint32_t *ids, uint32_t n);

/* The same for a tt-metal built against libc++ (ttmetal_remap_libcxx.c): another engine,
 * distribution and shuffle, so another permutation. */
void memd_ttmetal_libcxx_remap(uint32_t *ids, uint32_t n);

/* Both descriptors (buffers, not NUL-terminated; the names are used in errors) -> a
 * device spec: the groups above (DRAM with one `data` region), the default policy. Not validated: memd.yaml
 * refines it first; memd_device_create validates. 0, or -errno with *err filled and
 * *out empty. The daemon (config_device.c), the tests and the fuzz target all build
 * tt-metal devices here. */
int memd_ttmetal_device(const char *soc_file, const char *soc_buf, size_t soc_len,
                        const char *core_file, const char *core_buf, size_t core_len,
                        const memd_ttmetal_opts *opts, memd_device_spec *out, memd_error *err);

#endif
