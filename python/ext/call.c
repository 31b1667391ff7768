/* memd._memd: one call on a Client's connection, made without the GIL; a close()
 * meanwhile only marks the client, and the last call out disconnects. */
#include "memdpy.h"

memclient *memdpy_client_enter(memdpy_client *self)
{
    if (!self->c || self->closing) {
        memdpy_raise_msg(memdpy_err.conn, ENOTCONN, "the client is closed");
        return NULL;
    }
    self->inflight++;
    return self->c;
}

void memdpy_client_leave(memdpy_client *self)
{
    if (--self->inflight == 0 && self->closing && self->c) {
        memclient *c = self->c;
        self->c = NULL;
        Py_BEGIN_ALLOW_THREADS
        memclient_disconnect(c);
        Py_END_ALLOW_THREADS
    }
}

