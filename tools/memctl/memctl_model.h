/* memctl — model and plan subcommands (memctl_model*.c). */
#ifndef MEMD_CLIENT_MEMCTL_MODEL_H
#define MEMD_CLIENT_MEMCTL_MODEL_H

#include <stdint.h>
#include <stdio.h>

#include "memctl_service.h"

/* Plans, models and instances of a snapshot dumped with MEMCLIENT_DUMP_MODELS. */
void memctl_models_table(FILE *f, const memclient_snapshot *s);

/* memctl model import: runs the Python package's importer (memctl_model_import.c);
 * argv[0] is "import". */
int memctl_model_import(int argc, char **argv);

#endif
