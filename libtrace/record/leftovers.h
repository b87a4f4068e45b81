/* leftovers.h: the processes a traced program leaves running when it ends
 * (leftovers.c), for the engine's run (run.c). */
#ifndef GT_LEFTOVERS_H
#define GT_LEFTOVERS_H

#include <signal.h>

/* How long processes that were passed a TERM or HUP have to end, so that
 * their last records are read when their connection closes. */
#define GT_LEFTOVERS_TERM_GRACE_MS 2000

/* Called once the program (gtrace's child) has ended, with gtrace the
 * subreaper of what it started: says on stderr which processes are left
 * (one line), and reaps them until they have all ended, `wait_s` seconds
 * have passed, or gtrace gets SIGTERM, SIGHUP, SIGINT or SIGQUIT. TERM and
 * HUP are passed on to them, which then get GT_LEFTOVERS_TERM_GRACE_MS to
 * end. `forwarded` (0: none) is a TERM or HUP already passed to the
 * program: it is passed on at once. `old` holds gtrace's dispositions of
 * SIGINT, SIGQUIT, SIGTERM and SIGHUP when it started: one ignored then is
 * ignored here too. Says what became of processes still there when the wait
 * was cut short. Returns the signal gtrace got while waiting, or 0. The
 * dispositions are left to the caller to set afterwards. */
int gt_record_wait_leftovers(int wait_s, int forwarded, const struct sigaction old[4]);
/* The handler of those signals while waiting (async-signal-safe): one that
 * comes after the program ended and before the wait began calls it too. */
void gt_record_leftover_signal(int sig);

#endif
