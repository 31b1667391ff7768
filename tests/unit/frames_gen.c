/* Writes tests/data/frames/records.txt: the encoding of every golden value (rec lines)
 * and the decoder's verdict on every malformed variant (bad lines), by the codec this is
 * built with. Run it only on a tree whose codec is the reference, the hand-written one of
 * before issue 23 (see tests/data/frames/README); the file is then the contract that
 * test_frames_golden.c holds every later codec to. */
#include <stdio.h>
#include <stdlib.h>

#include "frames_golden.h"

static void hex(const uint8_t *b, size_t n)
{
    for (size_t i = 0; i < n; i++)
        printf("%02x", b[i]);
    putchar('\n');
}

int main(void)
{
    uint8_t buf[FRAMES_BUF_MAX], again[FRAMES_BUF_MAX];
    printf("# memd wire records, written by memd-frames-gen (tests/unit/frames_gen.c).\n"
           "# rec NAME HEX: the encoding of the golden value NAME (frames_golden.c).\n"
           "# bad NAME BASE ERRNO HEX: a malformed BASE that its decoder refuses with -ERRNO.\n");
    for (size_t i = 0; i < frames_nrecs; i++) {
        const frames_rec *r = &frames_recs[i];
        size_t n = r->put(buf), m = 0;
        /* The reference codec must read its own value back, or the line records nothing. */
        if (r->reput(buf, n, again, &m) != 0 || m != n) {
            fprintf(stderr, "memd-frames-gen: %s does not read back\n", r->name);
            return 1;
        }
        printf("rec %s ", r->name);
        hex(buf, n);
    }
    for (size_t i = 0; i < frames_nbads; i++) {
        const frames_bad *b = &frames_bads[i];
        size_t n = frames_bad_build(b, buf), m;
        int rc = frames_rec_find(b->base)->reput(buf, n, again, &m);
        const char *name = frames_errno_name(-rc);
        if (rc >= 0 || !name) {
            fprintf(stderr, "memd-frames-gen: %s is not refused (%d)\n", b->name, rc);
            return 1;
        }
        printf("bad %s %s %s ", b->name, b->base, name);
        hex(buf, n);
    }
    return 0;
}
