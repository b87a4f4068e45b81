/* batch.c: where the importers write, below them all: rows go through the
 * store's writer in transactions of a bounded size, strings are interned,
 * and the input's process is named once. It reads no format and drives
 * nothing: kineto.c and snapshot.c call it, import.c opens and closes the
 * writer around them. */
#include "import_int.h"

enum { COMMIT_EVERY = 65536 }; /* rows per transaction */

int im_add(im_out *o, const gt_event *ev)
{
    int rc = gt_writer_add(o->w, ev);
    if (rc < 0)
        return rc;
    if (++o->pending >= COMMIT_EVERY) {
        o->pending = 0;
        if ((rc = gt_writer_commit(o->w)) < 0 || (rc = gt_writer_begin(o->w)) < 0)
            return rc;
    }
    return 0;
}

int im_intern(im_out *o, const char *s, gt_string_id *out)
{
    return gt_writer_intern(o->w, s, out);
}

int im_name_process(im_out *o, const char *name)
{
    if (o->named)
        return 0;
    o->named = true;
    return gt_writer_add_process(o->w, o->pid, name);
}
