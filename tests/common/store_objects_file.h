/* memd tests — the state store's objects table opened directly with LMDB (memd not
 * running), for the suites that damage or drop object records. Header-only: only the
 * suites that link LMDB include it. */
#ifndef MEMD_TESTS_STORE_OBJECTS_FILE_H
#define MEMD_TESTS_STORE_OBJECTS_FILE_H

#include <check.h>
#include <lmdb.h>

/* The store file at path with a writable map (a value's bytes changed in place reach the
 * file) and a write transaction on "objects"; commit it and close env when done. */
static inline MDB_env *store_objects_open(const char *path, MDB_txn **txn, MDB_dbi *dbi)
{
    MDB_env *env;
    ck_assert_int_eq(mdb_env_create(&env), 0);
    ck_assert_int_eq(mdb_env_set_maxdbs(env, 4), 0);
    ck_assert_int_eq(mdb_env_open(env, path, MDB_NOSUBDIR | MDB_NOLOCK | MDB_WRITEMAP, 0600), 0);
    ck_assert_int_eq(mdb_txn_begin(env, NULL, 0, txn), 0);
    ck_assert_int_eq(mdb_dbi_open(*txn, "objects", 0, dbi), 0);
    return env;
}

#endif
