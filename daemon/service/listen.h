/* memd daemon — the listening socket: adopted from systemd (LISTEN_FDS/LISTEN_PID, the
 * protocol implemented here without libsystemd) or bound at a path. */
#ifndef MEMD_DAEMON_LISTEN_H
#define MEMD_DAEMON_LISTEN_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include <sys/un.h>

#include "error.h"

typedef struct memd_listen {
    int fd;
    bool activated;   /* passed in by the service manager */
    bool owns_path;   /* bound here: removed again at exit */
    char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
    dev_t dev;        /* identity of the socket file we created */
    ino_t ino;
} memd_listen;

/* Adopts a passed socket if LISTEN_PID names this process, else binds path: refuses a
 * path where a live server answers (-EADDRINUSE) or that is not a socket (-EEXIST),
 * removes a stale socket, creates it with mode 0660. -ENAMETOOLONG for a path that does
 * not fit sun_path. On error err says what and where. */
int memd_listen_open(const char *path, memd_listen *l, memd_error *err);

/* Closes the socket and removes the path if this process created it and it is still
 * the same file (a newer memd may have replaced it). */
void memd_listen_close(memd_listen *l);

#endif
