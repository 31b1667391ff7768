/* memd daemon — PAGE_SIZE: a class's default page size in a scope's bank group, which a
 * client needs before it plans a model (its tensors start on page boundaries). */
#include <errno.h>

#include "device.h"
#include "dispatch.h"
#include "malformed.h"
#include "names.h"
#include "reply.h"
#include "wire.h"

int memd_op_page_size(memd_state *st, memd_session *s, const memd_wire_hdr *h,
                      const uint8_t *p, memd_buf *out)
{
    (void)s;
    memd_wire_page_req req;
    int rc = memd_wire_page_req_get(p, h->len, &req);
    if (rc < 0)
        return memd_malformed(st, h, out, rc);
    memd_error err;
    memd_error_reset(&err);
    int dev = memd_state_dev_index(st, req.device);
    memd_kind kind = MEMD_KIND_DRAM;
    const memd_device_spec *spec = dev >= 0 ? st->devs[dev].spec : NULL;
    if (!spec)
        memd_error_set(&err, -ENODEV, "no device %u (%u configured)", req.device, st->ndevs);
    else if (memd_scope_kind((memd_scope)req.scope, &kind) < 0 || spec->groups[kind].banks == 0 ||
             !spec->policy[kind][req.cls].enabled)
        memd_error_set(&err, -EOPNOTSUPP, "device '%s' does not offer class %s in scope %s",
                       spec->name, memd_class_name((memd_class)req.cls),
                       memd_scope_name((memd_scope)req.scope));
    if (err.code)
        return memd_reply_fail(st, h, out, &err, false);
    uint8_t *o = memd_reply_begin(out, h->opcode, h->id, MEMD_WIRE_PAGE_INFO_SIZE);
    if (!o)
        return -ENOMEM;
    memd_wire_page_info info = {
        .page_size = memd_device_page_size(spec, kind, (memd_class)req.cls),
        .alignment = spec->groups[kind].alignment, .banks = spec->groups[kind].banks};
    memd_wire_page_info_put(o, &info);
    return 0;
}
