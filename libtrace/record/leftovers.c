/* leftovers.c: what the launcher does about the processes a traced program
 * leaves running when it ends (`sleep 40 &`, a daemon it started): names
 * them, waits for them within a bound (--wait-leftovers), passes TERM and
 * HUP on to them, and says what became of them. gtrace is their subreaper
 * (run.c), so they are its children and are reaped here; a process they
 * start in turn becomes gtrace's child when its parent ends.
 *
 * The wait polls (every POLL_MS) rather than blocking in waitpid: a signal
 * may be delivered to one of the collector's threads, which would leave a
 * blocked waitpid in the main thread asleep. It does not run the program,
 * read rings or write the trace.
 */
#define _GNU_SOURCE
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "record_int.h"
#include "leftovers.h"

enum { POLL_MS = 20, MAX_NAMED = 8 };

typedef struct leftover {
    pid_t pid;
    char comm[20];   /* as /proc/PID/stat gives it (at most 15 characters) */
    bool ended;
    int status;      /* its wait status, once ended */
} leftover;

typedef struct leftovers {
    leftover *v;
    size_t n, cap;
} leftovers;

static volatile sig_atomic_t got_signal, n_signals;

void gt_record_leftover_signal(int sig)
{
    got_signal = sig;
    n_signals++;
}

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static const char *signal_name(int sig, char *buf, size_t buf_bytes)
{
    const char *abbrev = sigabbrev_np(sig);
    if (abbrev)
        snprintf(buf, buf_bytes, "SIG%s", abbrev);
    else
        snprintf(buf, buf_bytes, "signal %d", sig);
    return buf;
}

static leftover *find(leftovers *l, pid_t pid)
{
    for (size_t i = 0; i < l->n; i++)
        if (l->v[i].pid == pid)
            return &l->v[i];
    return NULL;
}

/* Adds a process, or renames one that has exec'd since it was seen. */
static void add(leftovers *l, pid_t pid, const char *comm, size_t comm_len)
{
    leftover *o = find(l, pid);
    if (comm_len >= sizeof o->comm)
        comm_len = sizeof o->comm - 1;
    if (o) {
        memcpy(o->comm, comm, comm_len);
        o->comm[comm_len] = '\0';
        return;
    }
    if (l->n == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 8;
        leftover *v = realloc(l->v, cap * sizeof *v);
        if (!v)
            return; /* not named, still reaped and passed signals (kill(-1) is not used) */
        l->v = v;
        l->cap = cap;
    }
    o = &l->v[l->n++];
    memset(o, 0, sizeof *o);
    o->pid = pid;
    memcpy(o->comm, comm, comm_len);
}

/* Adds the processes whose parent is gtrace (alive, not zombies) to `l`. */
static void scan_children(leftovers *l)
{
    pid_t self = getpid();
    DIR *d = opendir("/proc");
    struct dirent *e;
    while (d && (e = readdir(d))) {
        char *end;
        long pid = strtol(e->d_name, &end, 10);
        if (*end || pid <= 0)
            continue;
        char path[64], buf[512];
        snprintf(path, sizeof path, "/proc/%ld/stat", pid);
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
            continue;
        ssize_t n = read(fd, buf, sizeof buf - 1);
        close(fd);
        if (n <= 0)
            continue;
        buf[n] = '\0';
        /* "PID (COMM) STATE PPID ...": COMM may hold spaces and parentheses */
        char *open_p = strchr(buf, '('), *close_p = strrchr(buf, ')');
        char state;
        long ppid;
        if (!open_p || !close_p || close_p < open_p || sscanf(close_p + 1, " %c %ld", &state, &ppid) != 2)
            continue;
        if (ppid == self && state != 'Z')
            add(l, (pid_t)pid, open_p + 1, (size_t)(close_p - open_p - 1));
    }
    if (d)
        closedir(d);
}

/* Reaps every child that has ended; false once none is left. */
static bool reap(leftovers *l)
{
    for (;;) {
        int st;
        pid_t w = waitpid(-1, &st, WNOHANG);
        if (w > 0) {
            leftover *o = find(l, w);
            if (o) {
                o->ended = true;
                o->status = st;
            }
            continue;
        }
        if (w < 0 && errno == EINTR)
            continue;
        return w == 0; /* ECHILD: every descendant is gone */
    }
}

static size_t n_running(const leftovers *l)
{
    size_t n = 0;
    for (size_t i = 0; i < l->n; i++)
        n += !l->v[i].ended;
    return n;
}

/* "1234 (sleep), 1240 (worker)" for those running (or all), at most MAX_NAMED. */
static void name_them(const leftovers *l, bool running_only, char *out, size_t out_bytes)
{
    size_t len = 0, named = 0, n = 0;
    out[0] = '\0';
    for (size_t i = 0; i < l->n; i++) {
        if (running_only && l->v[i].ended)
            continue;
        n++;
        if (named < MAX_NAMED && len < out_bytes) {
            len += (size_t)snprintf(out + len, out_bytes - len, "%s%d (%s)", named ? ", " : "", (int)l->v[i].pid,
                                    l->v[i].comm);
            named++;
        }
    }
    if (n > named && len < out_bytes)
        snprintf(out + len, out_bytes - len, " and %zu more", n - named);
}

static void pass_on(leftovers *l, int sig)
{
    scan_children(l); /* with those that became gtrace's since the last look */
    for (size_t i = 0; i < l->n; i++)
        if (!l->v[i].ended)
            kill(l->v[i].pid, sig);
}

/* One line: what became of each process named, after a cut-short wait. */
static void say_outcome(const leftovers *l)
{
    char line[2048], sig[32];
    size_t len = (size_t)snprintf(line, sizeof line, "gtrace: of the processes left running, ");
    for (size_t i = 0; i < l->n && i < MAX_NAMED && len < sizeof line; i++) {
        const leftover *o = &l->v[i];
        char how[64];
        if (!o->ended)
            snprintf(how, sizeof how, "is still running");
        else if (WIFSIGNALED(o->status))
            snprintf(how, sizeof how, "was ended by %s", signal_name(WTERMSIG(o->status), sig, sizeof sig));
        else
            snprintf(how, sizeof how, "exited with %d", WEXITSTATUS(o->status));
        len += (size_t)snprintf(line + len, sizeof line - len, "%s%d (%s) %s", i ? ", " : "", (int)o->pid, o->comm,
                                how);
    }
    if (l->n > MAX_NAMED && len < sizeof line)
        snprintf(line + len, sizeof line - len, " (and %zu more)", l->n - MAX_NAMED);
    gt_record_say("%s\n", line);
}

int gt_record_wait_leftovers(int wait_s, int forwarded, const struct sigaction old[4])
{
    static const int sigs[4] = {SIGINT, SIGQUIT, SIGTERM, SIGHUP};
    leftovers l = {NULL, 0, 0};
    char names[1024], sig[32];
    int got = 0;
    if (!reap(&l))
        return n_signals ? (int)got_signal : 0;
    struct sigaction stop = {.sa_handler = gt_record_leftover_signal};
    sigemptyset(&stop.sa_mask);
    for (int i = 0; i < 4; i++) {
        bool ignored = !(old[i].sa_flags & SA_SIGINFO) && old[i].sa_handler == SIG_IGN;
        if (!ignored)
            sigaction(sigs[i], &stop, NULL);
    }
    scan_children(&l);
    name_them(&l, false, names, sizeof names);
    size_t n = l.n;
    const char *them = n == 1 ? "it" : "them";
    if (forwarded)
        gt_record_say("gtrace: the program ended, leaving %s running: %s; passing %s on to %s\n",
                n == 1 ? "a process" : "processes", n ? names : "(unnamed)", signal_name(forwarded, sig, sizeof sig),
                them);
    else if (wait_s == 0)
        gt_record_say("gtrace: the program ended, leaving %s running: %s; not waiting for %s (--wait-leftovers=0)\n",
                n == 1 ? "a process" : "processes", n ? names : "(unnamed)", them);
    else
        gt_record_say("gtrace: the program ended, leaving %s running: %s; waiting up to %d s for %s "
                        "(--wait-leftovers; a SIGTERM or SIGHUP to gtrace is passed on to %s)\n",
                n == 1 ? "a process" : "processes", n ? names : "(unnamed)", wait_s, them, them);
    int64_t deadline = now_ms() + (int64_t)wait_s * 1000;
    if (forwarded) {
        pass_on(&l, forwarded);
        if (deadline > now_ms() + GT_LEFTOVERS_TERM_GRACE_MS)
            deadline = now_ms() + GT_LEFTOVERS_TERM_GRACE_MS;
    }
    bool cut_short = false, more = true;
    int seen = 0; /* a signal since the program ended counts (gt_record_leftover_signal) */
    while ((more = reap(&l))) {
        if (n_signals != seen) {
            int s = got_signal;
            if (got) { /* a second signal: stop at once */
                deadline = 0;
            } else if (s == SIGTERM || s == SIGHUP) {
                pass_on(&l, s);
                gt_record_say("gtrace: got %s: passed it on to the processes left running; writing the trace\n",
                        signal_name(s, sig, sizeof sig));
                deadline = now_ms() + GT_LEFTOVERS_TERM_GRACE_MS;
            } else {
                gt_record_say("gtrace: got %s: not waiting for the processes left running; writing the trace\n",
                        signal_name(s, sig, sizeof sig));
                deadline = 0;
            }
            got = got ? got : s;
            seen = n_signals;
        }
        if (now_ms() >= deadline)
            break;
        struct timespec ts = {0, POLL_MS * 1000000L};
        nanosleep(&ts, NULL);
    }
    cut_short = got || forwarded;
    if (more && !cut_short && wait_s > 0) {
        scan_children(&l); /* their names now, after an exec */
        name_them(&l, true, names, sizeof names);
        gt_record_say("gtrace: stopped waiting after %d s; still running: %s (what %s record%s from now on is not "
                        "in the trace)\n", wait_s, n_running(&l) ? names : "processes started since",
                n_running(&l) == 1 ? "it" : "they", n_running(&l) == 1 ? "s" : "");
    } else if (cut_short && l.n > 0) {
        say_outcome(&l);
    }
    free(l.v);
    return got;
}
