/* Replay driver for libFuzzer targets without libFuzzer: runs LLVMFuzzerTestOneInput
 * over every file named on the command line, descending into directories. A crash or
 * abort fails the run, like in the fuzzer; exit status 1 if a path cannot be read.
 *
 * Binary seeds are kept in the tree as text: a file named *.hex holds hex byte pairs
 * (white space and # comments to the end of a line are skipped) and is decoded before
 * it is run (for libFuzzer itself: `grep -v "^#" F.hex | xxd -r -p > F`). */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int hex_digit(uint8_t c)
{
    return c >= '0' && c <= '9'   ? c - '0'
           : c >= 'a' && c <= 'f' ? c - 'a' + 10
           : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                  : -1;
}

/* Decodes buf[0, *len) in place. 0, or -1 on a stray character or an odd digit. */
static int unhex(uint8_t *buf, size_t *len)
{
    size_t out = 0;
    int hi = -1;
    for (size_t i = 0; i < *len; i++) {
        uint8_t c = buf[i];
        if (c == '#') {
            while (i < *len && buf[i] != '\n')
                i++;
            continue;
        }
        if (c == ' ' || c == '\t' || c == '\n' || c == '\r')
            continue;
        int v = hex_digit(c);
        if (v < 0)
            return -1;
        if (hi < 0) {
            hi = v;
        } else {
            buf[out++] = (uint8_t)(hi << 4 | v);
            hi = -1;
        }
    }
    if (hi >= 0)
        return -1;
    *len = out;
    return 0;
}

static int run_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "fuzz-replay: cannot open %s\n", path);
        return 1;
    }
    size_t cap = 4096, len = 0;
    uint8_t *buf = malloc(cap);
    for (size_t k; buf && (k = fread(buf + len, 1, cap - len, f)) > 0;) {
        len += k;
        if (len == cap) {
            uint8_t *nb = realloc(buf, cap *= 2);
            if (!nb) {
                free(buf);
                buf = NULL;
            }
            buf = nb;
        }
    }
    int bad = ferror(f) || !buf;
    fclose(f);
    if (bad) {
        free(buf);
        fprintf(stderr, "fuzz-replay: cannot read %s\n", path);
        return 1;
    }
    size_t plen = strlen(path);
    if (plen > 4 && strcmp(path + plen - 4, ".hex") == 0 && unhex(buf, &len) < 0) {
        free(buf);
        fprintf(stderr, "fuzz-replay: %s: not hex byte pairs\n", path);
        return 1;
    }
    LLVMFuzzerTestOneInput(buf, len);
    free(buf);
    return 0;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Directories are walked in name order so every run replays the same sequence. */
static int run_path(const char *path, int *count)
{
    struct stat st;
    if (stat(path, &st)) {
        fprintf(stderr, "fuzz-replay: cannot stat %s\n", path);
        return 1;
    }
    if (!S_ISDIR(st.st_mode)) {
        ++*count;
        return run_file(path);
    }
    DIR *d = opendir(path);
    if (!d) {
        fprintf(stderr, "fuzz-replay: cannot open directory %s\n", path);
        return 1;
    }
    char **names = NULL;
    size_t n = 0, cap = 0;
    int rc = 0;
    for (struct dirent *e; (e = readdir(d));) {
        if (e->d_name[0] == '.')
            continue;
        if (n == cap) {
            char **nn = realloc(names, (cap = cap ? 2 * cap : 64) * sizeof(*nn));
            if (!nn) {
                rc = 1;
                break;
            }
            names = nn;
        }
        size_t l = strlen(path) + strlen(e->d_name) + 2;
        if (!(names[n] = malloc(l))) {
            rc = 1;
            break;
        }
        snprintf(names[n++], l, "%s/%s", path, e->d_name);
    }
    closedir(d);
    if (names)
        qsort(names, n, sizeof(*names), cmp_str);
    for (size_t i = 0; i < n; i++) {
        if (!rc)
            rc = run_path(names[i], count);
        free(names[i]);
    }
    free(names);
    return rc;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s FILE_OR_DIR...\n", argv[0]);
        return 2;
    }
    int count = 0, rc = 0;
    for (int i = 1; i < argc && !rc; i++)
        rc = run_path(argv[i], &count);
    if (!rc && count == 0) {
        fprintf(stderr, "fuzz-replay: no inputs found\n");
        return 1;
    }
    if (!rc)
        printf("fuzz-replay: %d inputs ran\n", count);
    return rc;
}
