/* signals.c: flush the trace when the program dies of a signal.
 *
 * SIGSEGV, SIGBUS, SIGFPE, SIGILL and SIGABRT always get a handler that asks
 * the writer thread to finish the trace (waiting at most 5 s), then hands
 * the signal on to the program's own handler, or dies of it as it would
 * have. SIGTERM, SIGINT, SIGHUP and SIGQUIT get one only where the program
 * left the default action (which kills without running exit handlers). A
 * program that installs its own handlers later replaces ours, and then its
 * handler decides (usually exit(), which flushes).
 *
 * It does not catch SIGKILL (nobody can): what the writer committed before,
 * every --flush-ms, is what a killed program leaves.
 */
#define _GNU_SOURCE
#include "config.h"

#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <string.h>

#include "capture.h"
#include "session.h"

static const int fatal_signals[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};
static const int polite_signals[] = {SIGTERM, SIGINT, SIGHUP, SIGQUIT};

static struct sigaction previous[NSIG];
static bool installed[NSIG];
static _Atomic int flushing;

static void on_signal(int sig, siginfo_t *si, void *uc)
{
    int saved_errno = errno;
    if (!atomic_exchange(&flushing, 1))
        gt_cap_stop_from_signal();

    struct sigaction *old = &previous[sig];
    if ((old->sa_flags & SA_SIGINFO) && old->sa_sigaction) {
        old->sa_sigaction(sig, si, uc);
    } else if (old->sa_handler == SIG_IGN) {
        /* the program ignores it: so do we */
    } else if (old->sa_handler != SIG_DFL && old->sa_handler) {
        old->sa_handler(sig);
    } else {
        /* Default action: die of this signal. It stays blocked until this
         * handler returns, then kills the process (with a core if due). */
        struct sigaction dfl;
        memset(&dfl, 0, sizeof dfl);
        dfl.sa_handler = SIG_DFL;
        sigemptyset(&dfl.sa_mask);
        sigaction(sig, &dfl, NULL);
        raise(sig);
    }
    errno = saved_errno;
}

static void install(int sig, bool only_if_default)
{
    struct sigaction old;
    if (sigaction(sig, NULL, &old) != 0)
        return;
    if (only_if_default && (old.sa_flags & SA_SIGINFO ? true : old.sa_handler != SIG_DFL))
        return;
    if (!(old.sa_flags & SA_SIGINFO) && old.sa_handler == SIG_IGN)
        return; /* ignored signals stay ignored: nothing dies of them */
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_signal;
    sa.sa_flags = SA_SIGINFO | SA_RESTART | SA_ONSTACK;
    sigemptyset(&sa.sa_mask);
    previous[sig] = old;
    installed[sig] = true;
    sigaction(sig, &sa, NULL);
}

void gt_cap_install_signal_handlers(void)
{
    for (size_t i = 0; i < sizeof fatal_signals / sizeof fatal_signals[0]; i++)
        install(fatal_signals[i], false);
    for (size_t i = 0; i < sizeof polite_signals / sizeof polite_signals[0]; i++)
        install(polite_signals[i], true);
}
