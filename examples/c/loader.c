/* memd example: a runtime's model loader, the loop a runtime writes around its driver
 * (see examples/README.md).
 *
 *   loader --standin PATH --model FILE.yaml [--socket PATH] [--device N] [--seed N]
 *          [--hold-ms MS] [--timeout-ms MS] [--stay]
 *
 * Every process of the runtime runs the same code: load the model; memd makes one of
 * them its filler (created), which writes each weight page by page where
 * memclient_locate says the page is (bank id, bank-local address) and then calls
 * memclient_model_set_ready. Every other process waits for ready with
 * memclient_model_wait and then uses the weights: here it reads every page back and
 * checks the bytes. A waiter whose filler died before set_ready is handed the job
 * (created again) and fills instead.
 *
 * The weights are made-up bytes a reader can check: for weight NAME, byte i is byte
 * i % 8 (little-endian) of splitmix64 word i / 8 of the key FNV-1a-64(NAME) ^ seed (see
 * weight_bytes). The "device" is the stand-in of standin.h; the rest is what a runtime
 * does with its own driver. */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <memd/client.h>

#include "model_yaml.h"
#include "standin.h"

static const char USAGE[] =
    "usage: loader --standin PATH --model FILE.yaml [--socket PATH] [--device N] [--seed N]\n"
    "              [--hold-ms MS] [--timeout-ms MS] [--stay]\n"
    "Loads the model; the process memd makes the filler writes every weight page by page\n"
    "into the stand-in device and sets the model ready, any other process waits for\n"
    "ready and reads the weights back, checking every byte.\n"
    "  --socket PATH   memd's socket (default: $MEMD_SOCKET, else memd's default)\n"
    "  --device N      memd device (default: the model's, else 0)\n"
    "  --seed N        the made-up weights' seed (default 1; readers need the filler's)\n"
    "  --hold-ms MS    the filler waits MS before set_ready (watch `memctl model list`)\n"
    "  --timeout-ms MS a waiter gives up after MS (default: no limit)\n"
    "  --stay          keep the model loaded until SIGINT or SIGTERM (a serving runtime)\n";

typedef struct options {
    const char *socket, *standin, *model;
    uint64_t device, seed, hold_ms, timeout_ms;
    int has_device, has_timeout, stay;
} options;

/* One pass over the weights: where the constants' pages are, the device, what it saw. */
typedef struct pass {
    int fill;                   /* write them (the filler), else read back and check */
    uint64_t seed;
    memclient_buffer cb;        /* the constants buffer: address, page size, banks */
    memclient_bank banks[STANDIN_MAX_BANKS];
    uint32_t nbanks;
    const standin_device *dev;
    unsigned char *want, *got;  /* one page */
    uint64_t tensors, pages, bytes;
    uint32_t digest;
    uint64_t touched;           /* bit b: bank b was written or read */
} pass;

#define FNV_OFFSET 0xcbf29ce484222325ull
#define FNV_PRIME 0x100000001b3ull
#define GOLDEN 0x9e3779b97f4a7c15ull
#define SHOWN_PAGES 24 /* a weight's line lists the banks of its first pages */

static uint64_t fnv1a(uint64_t h, const void *p, size_t n)
{
    for (const unsigned char *b = p; n--; b++)
        h = (h ^ *b) * FNV_PRIME;
    return h;
}

/* zlib's CRC-32 (Python's zlib.crc32) of what was written or read: the summary's digest. */
static uint32_t crc32(uint32_t crc, const unsigned char *p, size_t n)
{
    crc = ~crc;
    while (n--) {
        crc ^= *p++;
        for (int k = 0; k < 8; k++)
            crc = (crc >> 1) ^ (0xedb88320u & (0u - (crc & 1)));
    }
    return ~crc;
}

/* splitmix64's output for the k-th step from key. */
static uint64_t splitmix(uint64_t key, uint64_t k)
{
    uint64_t z = key + (k + 1) * GOLDEN;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* Bytes [off, off + n) of the weight whose key is key. */
static void weight_bytes(uint64_t key, uint64_t off, unsigned char *out, size_t n)
{
    for (size_t i = 0; i < n; i++)
        out[i] = (unsigned char)(splitmix(key, (off + i) / 8) >> (8 * ((off + i) % 8)));
}

static int parse_num(const char *opt, const char *s, uint64_t max, uint64_t *out)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 0);
    if (errno || end == s || *end || s[0] == '-' || v > max) {
        fprintf(stderr, "loader: %s needs a number from 0 to %" PRIu64 ", not '%s'\n", opt, max,
                s);
        return -1;
    }
    *out = v;
    return 0;
}

static int parse_args(int argc, char **argv, options *o)
{
    *o = (options){.seed = 1};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--stay")) {
            o->stay = 1;
            continue;
        }
        const char **text = NULL;
        uint64_t *num = NULL, max = UINT64_MAX;
        if (!strcmp(a, "--socket")) {
            text = &o->socket;
        } else if (!strcmp(a, "--standin")) {
            text = &o->standin;
        } else if (!strcmp(a, "--model")) {
            text = &o->model;
        } else if (!strcmp(a, "--device")) {
            num = &o->device, max = UINT32_MAX, o->has_device = 1;
        } else if (!strcmp(a, "--seed")) {
            num = &o->seed;
        } else if (!strcmp(a, "--hold-ms")) {
            num = &o->hold_ms, max = 86400000;
        } else if (!strcmp(a, "--timeout-ms")) {
            num = &o->timeout_ms, max = INT_MAX, o->has_timeout = 1;
        } else {
            fputs(USAGE, stderr);
            return -1;
        }
        if (!v) {
            fprintf(stderr, "loader: %s needs a value\n", a);
            return -1;
        }
        if (text)
            *text = v;
        else if (parse_num(a, v, max, num) < 0)
            return -1;
        i++;
    }
    if (!o->standin || !o->model) {
        fputs(USAGE, stderr);
        return -1;
    }
    return 0;
}

/* Prints what failed with the daemon's message; the exit code. */
static int fail(const char *what, int r)
{
    memclient_error e;
    memclient_last_error(&e);
    fprintf(stderr, "loader: %s: %s%s%s\n", what, memclient_strerror(r), e.message[0] ? ": " : "",
            e.message);
    return 1;
}

/* Writes (p->fill) or reads back and checks one weight of size bytes at offset start of
 * the constants buffer, page by page. 0, or 1 after printing what went wrong. */
static int walk_weight(pass *p, const char *name, uint64_t start, uint64_t size)
{
    const memclient_buffer *cb = &p->cb;
    const standin_device *dev = p->dev;
    unsigned char *want = p->want, *got = p->got;
    uint64_t key = fnv1a(FNV_OFFSET, name, strlen(name)) ^ p->seed;
    uint64_t pages = 0;
    printf("tensor %s: %" PRIu64 " bytes, %" PRIu64 " pages, banks",
           name, size, (size + cb->page_size - 1) / cb->page_size);
    /* Weights start on a page, so each step is one page of the buffer (the last one
     * shorter), all of it in one bank. */
    for (uint64_t off = 0; off < size; off += cb->page_size, pages++) {
        size_t n = (size_t)(size - off < cb->page_size ? size - off : cb->page_size);
        memclient_location loc;
        int r = memclient_locate(cb, p->banks, p->nbanks, start + off, &loc);
        if (r < 0) {
            printf("\n");
            return fail("locate", r);
        }
        if (pages < SHOWN_PAGES)
            printf(" %u", loc.bank);
        else if (pages == SHOWN_PAGES)
            printf(" ...");
        if (loc.bank >= dev->banks || loc.address + n > dev->bank_size) {
            fprintf(stderr, "\nloader: %s page %" PRIu64 " is at bank %u address 0x%" PRIx64
                            ", past the stand-in device (%u banks of %" PRIu64 " bytes)\n",
                    name, pages, loc.bank, loc.address, dev->banks, dev->bank_size);
            return 1;
        }
        weight_bytes(key, off, want, n);
        /* With a real device: the driver's write or read of n bytes at loc.address of
         * bank loc.bank (or at loc.absolute, or through the core at loc.noc_x/y). */
        ssize_t done = p->fill ? pwrite(dev->fd[loc.bank], want, n, (off_t)loc.address)
                            : pread(dev->fd[loc.bank], got, n, (off_t)loc.address);
        if (done != (ssize_t)n) {
            fprintf(stderr, "\nloader: bank %u: %s\n", loc.bank,
                    done < 0 ? strerror(errno) : "short transfer");
            return 1;
        }
        if (!p->fill && memcmp(want, got, n)) {
            size_t k = 0;
            while (want[k] == got[k])
                k++;
            fprintf(stderr, "\nloader: %s page %" PRIu64 " (bank %u address 0x%" PRIx64
                            "): byte %" PRIu64 " is 0x%02x, not 0x%02x\n",
                    name, pages, loc.bank, loc.address, off + k, got[k], want[k]);
            return 1;
        }
        p->digest = crc32(p->digest, p->fill ? want : got, n);
        p->touched |= 1ull << loc.bank;
    }
    printf("\n");
    p->tensors++;
    p->pages += pages;
    p->bytes += size;
    return 0;
}

/* Fills or checks every weight of the loaded model, in the model's tensor order. */
static int walk_weights(memclient *c, const memd_model_yaml *y, const memclient_model_info *mi,
                        const memclient_tensor_info *ti, int fill, const options *o,
                        const standin_device *dev)
{
    if (!mi->const_handle) {
        printf("the model has no weights\n");
        return 0;
    }
    /* Where the constants buffer's pages are: its page size and banks (two round trips;
     * memclient_locate then answers each page without one). */
    pass p = {.fill = fill, .seed = o->seed, .dev = dev};
    memclient_alloc_info ai;
    int r = memclient_query(c, mi->const_handle, &ai);
    int nbanks = r < 0 ? r : memclient_bank_info(c, mi->const_handle, p.banks, STANDIN_MAX_BANKS);
    if (nbanks < 0)
        return fail("the constants buffer", nbanks);
    if (nbanks > STANDIN_MAX_BANKS) {
        fprintf(stderr, "loader: the constants use %d banks, more than %d\n", nbanks,
                STANDIN_MAX_BANKS);
        return 1;
    }
    p.cb = ai.buf;
    p.nbanks = (uint32_t)nbanks;
    uint64_t step = 0; /* the largest transfer: one page, or a smaller weight */
    for (size_t i = 0; i < y->desc.ntensors; i++)
        if (ti[i].role == MEMCLIENT_TENSOR_WEIGHT && ti[i].size > step)
            step = ti[i].size;
    if (step > p.cb.page_size)
        step = p.cb.page_size;
    p.want = malloc(step);
    p.got = malloc(step);
    int code = p.want && p.got ? 0 : 1;
    if (code)
        fprintf(stderr, "loader: out of memory\n");
    for (size_t i = 0; !code && i < y->desc.ntensors; i++)
        if (ti[i].role == MEMCLIENT_TENSOR_WEIGHT)
            code = walk_weight(&p, y->desc.tensors[i].name, ti[i].value - mi->const_address,
                               ti[i].size);
    free(p.want);
    free(p.got);
    if (!code)
        printf("%s %" PRIu64 " tensors, %" PRIu64 " pages, %d banks, %" PRIu64
               " bytes, digest %08" PRIx32 "\n",
               fill ? "filled" : "verified", p.tensors, p.pages, __builtin_popcountll(p.touched),
               p.bytes, p.digest);
    return code;
}

static uint64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static int run(const options *o, memd_model_yaml *y, memclient *c, const standin_device *dev)
{
    size_t n = y->desc.ntensors;
    memclient_tensor_info *ti = calloc(n, sizeof *ti);
    if (!ti) {
        fprintf(stderr, "loader: out of memory\n");
        return 1;
    }
    memclient_model_info mi = {0};
    uint64_t t0 = now_ms();
    int r = memclient_model_load(c, &y->desc, NULL, &mi, ti);
    int code = r < 0 ? fail("model load", r) : 0;
    uint64_t page = mi.page_size; /* (a wait's answer has no page size) */
    if (!code && !mi.created) {
        /* Another process fills the weights: wait until it says they are there (or
         * left without saying so: then mi.created is set and this process fills). */
        r = memclient_model_wait(c, mi.model_id, o->has_timeout ? (int)o->timeout_ms : -1, &mi,
                                 ti, n);
        if (r < 0)
            code = fail("waiting for the weights", r);
    }
    if (!code)
        printf("model %s on device %u: page %" PRIu64 " bytes, %s after %" PRIu64 " ms\n",
               mi.name, mi.device, page, mi.created ? "filler" : "reader", now_ms() - t0);
    if (!code)
        code = walk_weights(c, y, &mi, ti, mi.created, o, dev);
    if (!code && mi.created) {
        if (o->hold_ms) {
            printf("holding %" PRIu64 " ms before set_ready\n", o->hold_ms);
            struct timespec ts = {(time_t)(o->hold_ms / 1000), (long)(o->hold_ms % 1000) * 1000000};
            nanosleep(&ts, NULL);
        }
        if ((r = memclient_model_set_ready(c, mi.model_id)) < 0)
            code = fail("set_ready", r);
        else
            printf("set ready\n");
    }
    free(ti);
    return code;
}

int main(int argc, char **argv)
{
    options o;
    if (parse_args(argc, argv, &o) < 0)
        return 2;
    setvbuf(stdout, NULL, _IOLBF, 0); /* progress lines as they happen, also into a pipe */
    memd_model_yaml y;
    memd_error err = {0};
    if (memd_model_yaml_read(o.model, &y, &err) < 0) {
        char msg[1200];
        memd_error_format(&err, msg, sizeof msg);
        fprintf(stderr, "loader: %s\n", msg);
        return 1;
    }
    if (o.has_device)
        y.desc.device = (uint32_t)o.device;
    /* --stay: the signals wait for sigwait, so the model is always released cleanly. */
    sigset_t stop;
    sigemptyset(&stop);
    sigaddset(&stop, SIGINT);
    sigaddset(&stop, SIGTERM);
    if (o.stay)
        sigprocmask(SIG_BLOCK, &stop, NULL);
    standin_device dev;
    memclient *c = NULL;
    int code = 1;
    if (standin_open(o.standin, &dev) < 0)
        goto out;
    int r = memclient_connect_named(o.socket, "loader", &c);
    if (r < 0) {
        fail("connect", r);
    } else {
        code = run(&o, &y, c, &dev);
        if (!code && o.stay) {
            printf("staying; SIGINT or SIGTERM ends\n");
            int sig;
            sigwait(&stop, &sig);
        }
        memclient_disconnect(c);
    }
    standin_close(&dev);
out:
    memd_model_yaml_free(&y);
    return code;
}
