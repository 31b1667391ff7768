/* Fuzz target: the plan CSV reader, then (for small problems) the planner, the
 * validator and a writer/reader round trip on whatever the reader accepts. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plan.h"
#include "plan_csv.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    memd_plan_csv csv;
    memd_error err = {0};
    if (memd_plan_csv_parse("fuzz.csv", (const char *)data, size, &csv, &err))
        return 0;
    if (csv.n > 64) { /* keep each input cheap: the parser was the main target */
        memd_plan_csv_free(&csv);
        return 0;
    }
    uint64_t *off = malloc((csv.n ? csv.n : 1) * sizeof(*off));
    if (!off)
        abort();
    memd_plan_result res;
    memd_plan_violation v;
    memd_plan_opts o = {.seed = 7, .max_iterations = 200};
    int rc = memd_plan_solve(csv.bufs, csv.n, &o, off, &res, &v);
    if (rc == 0) {
        uint64_t arena;
        /* A plan the validator rejects, or a wrong arena, is a planner bug. */
        if (memd_plan_validate(csv.bufs, csv.n, off, &v, &arena) != 0 || arena != res.arena ||
            res.arena < res.lower_bound)
            abort();
        char *buf = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&buf, &len);
        if (!f)
            abort();
        if (memd_plan_csv_write(f, &csv, off))
            abort();
        fclose(f);
        memd_plan_csv back;
        if (memd_plan_csv_parse("back.csv", buf, len, &back, &err) ||
            back.n != csv.n)
            abort();
        for (size_t i = 0; i < back.n; i++)
            if (!back.bufs[i].pinned || back.bufs[i].offset != off[i] ||
                strcmp(memd_plan_csv_id(&back, i), memd_plan_csv_id(&csv, i)))
                abort();
        memd_plan_csv_free(&back);
        free(buf);
    } else if (rc != -EINVAL && rc != -EOVERFLOW) {
        abort(); /* the reader accepted it, so only pin conflicts / overflow remain */
    }
    free(off);
    memd_plan_csv_free(&csv);
    return 0;
}
