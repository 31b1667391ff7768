/* memd daemon — the state store's fault injection for tests (store_internal.h). A leaf:
 * every write path asks here, and nothing here calls back into the store. */
#include "store_internal.h"

#include <stdio.h>
#include <unistd.h>

bool memd_store_failpoint(const memd_store *S, const char *name)
{
    if (!S->failpoint[0])
        return false;
    char p[PATH_MAX + 16];
    snprintf(p, sizeof p, "%s%s%s", S->failpoint, name ? "." : "", name ? name : "");
    return access(p, F_OK) == 0;
}
