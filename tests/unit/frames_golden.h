/* Golden wire records: one distinctive value of every record the codec writes and reads,
 * shared by the generator that recorded tests/data/frames/records.txt (frames_gen.c) and
 * the suite that checks a codec against that file (test_frames_golden.c).
 *
 * The values are built through the public struct fields of <memd/protocol.h> only, so the
 * same source builds against the hand-written codec that made the file and against the
 * generated one that must reproduce it byte for byte (issue 23). */
#ifndef MEMD_TESTS_FRAMES_GOLDEN_H
#define MEMD_TESTS_FRAMES_GOLDEN_H

#include <stddef.h>
#include <stdint.h>

/* Room for the largest record (SUBDEV_DEFINE with its ids, an EVENT) and then some. */
#define FRAMES_BUF_MAX 1024u

typedef struct frames_rec {
    const char *name;
    /* Encodes the record's value at out: the bytes written. */
    size_t (*put)(uint8_t *out);
    /* Decodes in[0, len) and encodes what it read again at out (*n bytes): 0 or the
     * decoder's negative errno. Equal bytes prove the decoder read every field back,
     * since every field of the value is distinct and non-zero. */
    int (*reput)(const uint8_t *in, size_t len, uint8_t *out, size_t *n);
} frames_rec;

extern const frames_rec frames_recs[];
extern const size_t frames_nrecs;

/* A malformed variant of a record that the decoder must refuse. */
enum frames_bad_op {
    FRAMES_SET8,  /* n bytes from off set to value (a string without NUL, an enum byte) */
    FRAMES_SET32, /* the u32 at off set to value (a flag word, a count) */
    FRAMES_CUT,   /* the record cut to off bytes */
};

typedef struct frames_bad {
    const char *name;
    const char *base; /* the frames_rec it mutates */
    enum frames_bad_op op;
    size_t off;
    size_t n;
    uint32_t value;
} frames_bad;

extern const frames_bad frames_bads[];
extern const size_t frames_nbads;

const frames_rec *frames_rec_find(const char *name);
/* Applies b to the encoding of its base at buf; the malformed length. */
size_t frames_bad_build(const frames_bad *b, uint8_t *buf);

/* errno <-> its symbol, for the file (an errno number is not portable; the name is). */
const char *frames_errno_name(int err);
int frames_errno_value(const char *name);

#endif
