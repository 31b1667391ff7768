/* memd daemon — state store: sub-devices defined by an admin's request (SUBDEV_DEFINE)
 * are written before the request is answered, so a restart brings them back (restored by
 * store_restore.c before the sessions and allocations). They are rare: each is one small
 * transaction of its own. Configured sub-devices are never stored: the config brings
 * them. */
#include "store_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"

static int put(memd_store *S, const MDB_val *key, MDB_val *val)
{
    MDB_txn *txn;
    int rc = mdb_txn_begin(S->env, NULL, 0, &txn);
    if (rc != 0)
        return rc;
    if ((rc = mdb_put(txn, S->dbi_subdevs, (MDB_val *)key, val, 0)) != 0) {
        mdb_txn_abort(txn);
        return rc;
    }
    return mdb_txn_commit(txn);
}

int memd_store_subdev_defined(void *data, const memd_subdev_spec *sd, char *msg, size_t cap)
{
    memd_state *st = data;
    memd_store *S = st->store;
    if (!S->restored)
        return 0; /* being restored from this very table */
    size_t len = memd_store_subdev_rec_size(sd);
    uint8_t *rec = malloc(len);
    if (!rec) {
        snprintf(msg, cap, "daemon out of memory");
        return -ENOMEM;
    }
    memd_store_subdev_rec_put(rec, sd);
    char name[MEMD_NAME_MAX] = {0};
    memcpy(name, sd->name, strnlen(sd->name, MEMD_NAME_MAX - 1));
    MDB_val key = {MEMD_NAME_MAX, name}, val = {len, rec};
    int rc = put(S, &key, &val);
    if (rc == MDB_MAP_FULL) {
        memd_error e;
        if (memd_store_grow(S, S->map_bytes + MEMD_STORE_TXN_COST + 4 * len, &e) == 0)
            rc = put(S, &key, &val);
    }
    free(rec);
    if (rc != 0) {
        memd_log(LOG_WARNING, "state store %s: cannot keep sub-device '%s': %s", S->path,
                 sd->name, mdb_strerror(rc));
        snprintf(msg, cap, "memd's state store cannot keep sub-device '%s' (%s): not defined",
                 sd->name, mdb_strerror(rc));
        return -EIO;
    }
    return 0;
}
