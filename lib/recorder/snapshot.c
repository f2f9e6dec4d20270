/* snapshot.c - the rings in memory as a CTF trace on disk, on request.
 *
 * fdr_snapshot(dir) writes the newest events of every thread: for each
 * buffer, the complete packets still in its ring, oldest first, then the
 * thread's partially filled current packet, as <dir>/stream_<index> next to
 * a fresh <dir>/metadata. It is not destructive: `consumed` is not moved
 * and nothing in the rings changes, so a second snapshot holds the same
 * events plus newer ones (until the ring wraps past them).
 *
 * DESIGN. The writers are stopped (section.c, fdr__section_quiesce) only
 * while the packets are copied into private memory, about 1 ms per 8 MiB;
 * the files are written afterwards with tracing running. An event that
 * arrives during the copy is counted as discarded (writer.c). Which slots
 * hold what, for a ring of n slots with P = produced:
 *
 *   thread has an open packet:  slots hold P-n+1 .. P-1 complete, P open
 *   no open packet:             slots hold P-n   .. P-1 complete
 *
 * Each packet is checked (magic, sequence number, buffer index, content
 * size) and skipped if wrong, as buffers are untrusted. The open packet is
 * written with content_size = the thread's write position, ts_end = the
 * snapshot time and the discarded count as of now.
 *
 * Gaps: when the oldest packet kept is not sequence 0, the packets before
 * it were overwritten. CTF readers only report a gap between two packets,
 * so the stream starts with an empty "anchor" packet of sequence 0 (same
 * thread, times equal to the oldest packet's beginning, nothing
 * discarded): babeltrace2 then reports the overwritten packets as
 * discarded, and the first real packet's cumulative discarded count as
 * discarded events.
 *
 * fdr__snapshot_write_live() is the same writing, straight from the rings,
 * for the crash handler: only open/write/close/mkdir, no malloc, no stdio,
 * no lock (its caller stopped the writers). The signal trigger
 * (fdr_snapshot_on_signal, FDR_SNAPSHOT_SIGNAL) only wakes a helper thread
 * through a futex; the helper takes the snapshot. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/futex.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "recorder/fdr-int.h"

/* What to write of one buffer. */
struct plan {
    struct fdr__buf *buf;
    uint64_t first, count; /* complete packets first .. first+count-1 */
    int partial;           /* the open packet follows them */
    struct fdr__pkt partial_hdr;
    uint32_t partial_bytes; /* content, header included */
    char *copy;             /* fdr_snapshot: count+partial packets; NULL: live */
};

/* ---- paths without snprintf (async-signal-safe) --------------------------- */

/* out = dir + "/" + name + number (number < 0: none). -ENAMETOOLONG if it
 * does not fit. */
int fdr__path_join(char *out, size_t cap, const char *dir, const char *name, long number)
{
    size_t dl = strlen(dir), nl = strlen(name);
    char num[24] = "";
    size_t kl = number >= 0 ? fdr__fmt_u64(num, (uint64_t)number, 10, 0) : 0;
    if (dl + 1 + nl + kl + 1 > cap)
        return -ENAMETOOLONG;
    memcpy(out, dir, dl);
    out[dl] = '/';
    memcpy(out + dl + 1, name, nl);
    memcpy(out + dl + 1 + nl, num, kl);
    out[dl + 1 + nl + kl] = 0;
    return 0;
}

/* ---- planning (writers stopped) ------------------------------------------- */

static int packet_ok(const struct fdr__pkt *p, const struct fdr__buf_hdr *h, uint64_t seq)
{
    return p->magic == FDR__CTF_MAGIC && p->seq == seq &&
           p->stream_instance_id == h->index && p->content_size % 8 == 0 &&
           p->content_size / 8 >= sizeof *p && p->content_size / 8 <= h->packet_size;
}

static void plan_buffer(struct plan *pl, struct fdr__buf *b, uint64_t now)
{
    struct fdr__buf_hdr *h = b->hdr;
    memset(pl, 0, sizeof *pl);
    pl->buf = b;
    /* Acquire pairs with the release in fdr__writer_close_packet. */
    uint64_t produced = __atomic_load_n(&h->produced, __ATOMIC_ACQUIRE);
    const struct fdr__writer *owner = NULL;
    for (const struct fdr__writer *w = fdr__writers; w; w = w->next)
        if (w->buf == b && w->pkt)
            owner = w;
    uint64_t keep = h->n_packets - (owner ? 1 : 0);
    pl->first = produced > keep ? produced - keep : 0;
    pl->count = produced - pl->first;
    if (!owner)
        return;
    const struct fdr__pkt *p = owner->pkt;
    const char *pos = __atomic_load_n(&owner->self->pos, __ATOMIC_RELAXED);
    if ((const char *)p != fdr__buf_slot(h, produced) || pos <= (const char *)(p + 1) ||
        pos > (const char *)p + h->packet_size)
        return; /* empty, or not what it should be */
    pl->partial = 1;
    memcpy(&pl->partial_hdr, p, sizeof *p);
    pl->partial_bytes = (uint32_t)(pos - (const char *)p);
    pl->partial_hdr.content_size = (uint64_t)pl->partial_bytes * 8;
    pl->partial_hdr.ts_end = now > p->ts_begin ? now : p->ts_begin;
    pl->partial_hdr.discarded =
        h->discarded + __atomic_load_n(&h->nested, __ATOMIC_RELAXED);
}

static const char *plan_packet(const struct plan *pl, uint64_t k)
{
    const struct fdr__buf_hdr *h = pl->buf->hdr;
    if (pl->copy)
        return pl->copy + k * h->packet_size;
    return fdr__buf_slot(h, pl->first + k);
}

/* ---- writing ----------------------------------------------------------------- */

static int write_stream(const char *dir, const struct plan *pl)
{
    const struct fdr__buf_hdr *h = pl->buf->hdr;
    if (pl->count == 0 && !pl->partial)
        return 0;
    char path[PATH_MAX];
    int r = fdr__path_join(path, sizeof path, dir, "stream_", (long)pl->buf->index);
    if (r < 0)
        return r;
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0)
        return -errno;
    int anchored = 0;
    for (uint64_t k = 0; k <= pl->count && r == 0; k++) {
        struct fdr__pkt hdr;
        const char *pkt = plan_packet(pl, k);
        if (k < pl->count)
            memcpy(&hdr, pkt, sizeof hdr);
        else if (pl->partial)
            hdr = pl->partial_hdr;
        else
            break;
        if (!packet_ok(&hdr, h, pl->first + k))
            continue;
        if (!anchored && hdr.seq > 0) {
            /* See "Gaps" in the file comment. */
            struct fdr__pkt anchor = hdr;
            anchor.seq = 0;
            anchor.ts_end = anchor.ts_begin;
            anchor.discarded = 0;
            anchor.content_size = sizeof anchor * 8;
            r = fdr__packet_write(fd, &anchor, pkt + sizeof anchor, h->packet_size);
        }
        anchored = 1;
        if (r == 0)
            r = fdr__packet_write(fd, &hdr, pkt + sizeof hdr, h->packet_size);
    }
    if (close(fd) < 0 && r == 0)
        r = -errno;
    return r;
}

static int make_dir(const char *dir)
{
    if (mkdir(dir, 0755) < 0 && errno != EEXIST)
        return -errno;
    struct stat st;
    if (stat(dir, &st) < 0)
        return -errno;
    return S_ISDIR(st.st_mode) ? 0 : -ENOTDIR;
}

int fdr__snapshot_write_live(const char *dir)
{
    static char meta_buf[8192]; /* one crash at a time (crash.c) */
    static struct plan pl;
    int r = make_dir(dir);
    if (r < 0)
        return r;
    char path[PATH_MAX];
    if ((r = fdr__path_join(path, sizeof path, dir, "metadata", -1)) < 0)
        return r;
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0)
        return -errno;
    r = fdr__metadata_emit(fd, meta_buf, sizeof meta_buf);
    close(fd);
    uint64_t now = fdr__now();
    uint32_t n = fdr__buf_count();
    for (uint32_t i = 0; i < n; i++) {
        struct fdr__buf *b = fdr__buf_at(i);
        if (!b)
            continue;
        plan_buffer(&pl, b, now);
        int s = write_stream(dir, &pl);
        if (s < 0 && r == 0)
            r = s;
    }
    return r;
}

/* ---- fdr_snapshot ------------------------------------------------------------ */

static pthread_mutex_t snap_lock = PTHREAD_MUTEX_INITIALIZER; /* one at a time */

int fdr_snapshot(const char *dir)
{
    if (!dir || !*dir)
        return -EINVAL;
    if (strlen(dir) > PATH_MAX - 32)
        return -EINVAL;
    fdr__init();
    int r = make_dir(dir);
    if (r < 0)
        return r;
    pthread_mutex_lock(&snap_lock);
    pthread_mutex_lock(&fdr__writers_lock);
    /* Buffers are created under the writers lock: n stays valid. */
    uint32_t n = fdr__buf_count();
    struct plan *plans = calloc(n ? n : 1, sizeof *plans);
    size_t total = 0;
    for (uint32_t i = 0; i < n; i++) {
        const struct fdr__buf_hdr *h = fdr__buf_at(i)->hdr;
        total += (size_t)h->n_packets * h->packet_size;
    }
    char *copy = total ? malloc(total) : NULL;
    if (!plans || (total && !copy)) {
        pthread_mutex_unlock(&fdr__writers_lock);
        pthread_mutex_unlock(&snap_lock);
        free(plans);
        free(copy);
        return -ENOMEM;
    }
    r = fdr__section_quiesce();
    if (r == 0) {
        uint64_t now = fdr__now();
        char *at = copy;
        for (uint32_t i = 0; i < n; i++) {
            struct plan *pl = &plans[i];
            struct fdr__buf *b = fdr__buf_at(i);
            plan_buffer(pl, b, now);
            size_t ps = b->hdr->packet_size;
            pl->copy = at;
            for (uint64_t k = 0; k < pl->count; k++)
                memcpy(at + k * ps, fdr__buf_slot(b->hdr, pl->first + k), ps);
            if (pl->partial)
                memcpy(at + pl->count * ps, fdr__buf_slot(b->hdr, pl->first + pl->count),
                       pl->partial_bytes);
            at += (size_t)b->hdr->n_packets * ps;
        }
        fdr__section_resume();
    }
    pthread_mutex_unlock(&fdr__writers_lock);
    if (r == 0) {
        r = fdr__metadata_write(dir);
        for (uint32_t i = 0; i < n; i++) {
            int s = write_stream(dir, &plans[i]);
            if (s < 0 && r == 0)
                r = s;
        }
    }
    pthread_mutex_unlock(&snap_lock);
    free(copy);
    free(plans);
    return r;
}

/* ---- the signal trigger --------------------------------------------------- */

static pthread_mutex_t trig_lock = PTHREAD_MUTEX_INITIALIZER;
static int trig_sig;              /* current signal, 0 when none */
static struct sigaction trig_old; /* what it replaced */
static char *trig_dir;            /* under trig_lock */
static uint32_t trig_requests;    /* futex word: bumped by the handler */
static int helper_started;

static void trigger_handler(int sig)
{
    (void)sig;
    int e = errno;
    /* Release pairs with the acquire load in helper_main. */
    __atomic_fetch_add(&trig_requests, 1, __ATOMIC_RELEASE);
    syscall(SYS_futex, &trig_requests, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
    errno = e;
}

static void *helper_main(void *arg)
{
    (void)arg;
    uint32_t done = 0;
    long count = 0;
    for (;;) {
        uint32_t req = __atomic_load_n(&trig_requests, __ATOMIC_ACQUIRE);
        if (req == done) {
            syscall(SYS_futex, &trig_requests, FUTEX_WAIT_PRIVATE, req, NULL, NULL, 0);
            continue;
        }
        done = req; /* requests that came together make one snapshot */
        pthread_mutex_lock(&trig_lock);
        char base[PATH_MAX], name[64] = "snapshot-", path[PATH_MAX];
        int ok = trig_dir && strlen(trig_dir) < sizeof base;
        if (ok)
            strcpy(base, trig_dir);
        pthread_mutex_unlock(&trig_lock);
        if (!ok)
            continue;
        size_t k = strlen(name);
        k += fdr__fmt_u64(name + k, (uint64_t)fdr__pid, 10, 0);
        name[k++] = '-';
        name[k] = 0;
        int r = make_dir(base);
        if (r == 0)
            r = fdr__path_join(path, sizeof path, base, name, ++count);
        if (r == 0)
            r = fdr_snapshot(path);
        if (r < 0)
            fdr__warn("snapshot on signal into %s failed: %s", base, strerror(-r));
        else
            fdr__warn("snapshot written to %s", path);
    }
    return NULL;
}

/* A fault signal comes back as long as the faulting instruction does:
 * taking snapshots from it would loop forever (-EINVAL). A signal of the
 * crash handler is its (-EBUSY). */
/* Starts the helper thread, with every signal blocked from its first
 * instruction on; trig_lock held. 0 or -EAGAIN. */
static int start_helper(void)
{
    if (helper_started)
        return 0;
    pthread_t th;
    pthread_attr_t a;
    pthread_attr_init(&a);
    pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &old);
    int e = pthread_create(&th, &a, helper_main, NULL);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    pthread_attr_destroy(&a);
    if (e != 0)
        return -EAGAIN;
    pthread_setname_np(th, "fdr-snapshot");
    helper_started = 1;
    return 0;
}

/* Around fork() (init.c). The child has no helper thread: it gets one of
 * its own when the trigger is on. snap_lock may be held by a thread that
 * writes a snapshot's files (it is not taken before fork, which would wait
 * for the files): the child has no such thread, and makes the lock anew. */
void fdr__snapshot_fork(enum fdr__fork_phase ph)
{
    if (ph == FDR__FORK_PREPARE) {
        pthread_mutex_lock(&trig_lock);
        return;
    }
    if (ph == FDR__FORK_CHILD) {
        pthread_mutex_init(&snap_lock, NULL);
        helper_started = 0;
        trig_requests = 0;
        if (trig_sig && start_helper() < 0)
            fdr__warn("no snapshot on signal in child %d: no helper thread",
                      (int)getpid());
    }
    pthread_mutex_unlock(&trig_lock);
}

static int on_signal(int sig, const char *dir)
{
    if (sig < 0 || sig >= NSIG || sig == SIGKILL || sig == SIGSTOP ||
        fdr__signal_is_fault(sig) || (sig && (!dir || !*dir)))
        return -EINVAL;
    if (fdr__crash_owns(sig))
        return -EBUSY;
    int r = 0;
    pthread_mutex_lock(&trig_lock);
    if (trig_sig) {
        sigaction(trig_sig, &trig_old, NULL);
        trig_sig = 0;
    }
    if (sig) {
        char *d = strdup(dir);
        if (!d) {
            r = -ENOMEM;
            goto out;
        }
        free(trig_dir);
        trig_dir = d;
        if ((r = start_helper()) < 0)
            goto out;
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = trigger_handler;
        sa.sa_flags = SA_RESTART;
        sigemptyset(&sa.sa_mask);
        if (sigaction(sig, &sa, &trig_old) < 0) {
            r = -EINVAL;
            goto out;
        }
        trig_sig = sig;
    }
out:
    pthread_mutex_unlock(&trig_lock);
    return r;
}

int fdr_snapshot_on_signal(int sig, const char *dir)
{
    fdr__init();
    return on_signal(sig, dir);
}

/* ---- environment ----------------------------------------------------------- */

static const struct {
    const char *name;
    int sig;
} sig_names[] = {
    {"HUP", SIGHUP},     {"INT", SIGINT},   {"QUIT", SIGQUIT},     {"ILL", SIGILL},
    {"TRAP", SIGTRAP},   {"ABRT", SIGABRT}, {"BUS", SIGBUS},       {"FPE", SIGFPE},
    {"USR1", SIGUSR1},   {"SEGV", SIGSEGV}, {"USR2", SIGUSR2},     {"PIPE", SIGPIPE},
    {"ALRM", SIGALRM},   {"TERM", SIGTERM}, {"CHLD", SIGCHLD},     {"CONT", SIGCONT},
    {"TSTP", SIGTSTP},   {"TTIN", SIGTTIN}, {"TTOU", SIGTTOU},     {"URG", SIGURG},
    {"XCPU", SIGXCPU},   {"XFSZ", SIGXFSZ}, {"VTALRM", SIGVTALRM}, {"PROF", SIGPROF},
    {"WINCH", SIGWINCH}, {"IO", SIGIO},     {"PWR", SIGPWR},       {"SYS", SIGSYS},
};

int fdr__signal_parse(const char *s, size_t len)
{
    char buf[32];
    if (len == 0 || len >= sizeof buf)
        return -EINVAL;
    memcpy(buf, s, len);
    buf[len] = 0;
    const char *p = buf;
    if (strncasecmp(p, "SIG", 3) == 0)
        p += 3;
    if (*p >= '0' && *p <= '9') {
        char *end;
        long v = strtol(p, &end, 10);
        return *end || v <= 0 || v >= NSIG ? -EINVAL : (int)v;
    }
    for (size_t i = 0; i < sizeof sig_names / sizeof sig_names[0]; i++)
        if (strcasecmp(p, sig_names[i].name) == 0)
            return sig_names[i].sig;
    int base = 0, sign = 1;
    if (strncasecmp(p, "RTMIN", 5) == 0)
        base = SIGRTMIN;
    else if (strncasecmp(p, "RTMAX", 5) == 0)
        base = SIGRTMAX, sign = -1;
    if (!base)
        return -EINVAL;
    p += 5;
    if (!*p)
        return base;
    if (*p != (sign > 0 ? '+' : '-') || p[1] < '0' || p[1] > '9')
        return -EINVAL;
    char *end;
    long v = strtol(p + 1, &end, 10);
    if (*end || end == p + 1 || v < 0 || v > SIGRTMAX - SIGRTMIN)
        return -EINVAL;
    return base + sign * (int)v;
}

void fdr__flight_init(void)
{
    fdr__crash_init();
    const char *s = getenv("FDR_SNAPSHOT_SIGNAL");
    if (!s || !*s)
        return;
    int sig = fdr__signal_parse(s, strlen(s));
    const char *dir = getenv("FDR_SNAPSHOT_DIR");
    if (!dir || !*dir)
        dir = ".";
    if (sig < 0 || sig == SIGKILL || sig == SIGSTOP) {
        fdr__warn("FDR_SNAPSHOT_SIGNAL=\"%s\" is not a signal (e.g. USR2 or 12); "
                  "no snapshot on signal",
                  s);
        return;
    }
    int r = on_signal(sig, dir); /* fdr__init() is running: not the public one */
    if (r == -EINVAL && fdr__signal_is_fault(sig))
        fdr__warn("FDR_SNAPSHOT_SIGNAL=\"%s\" is a fault signal, which cannot take "
                  "snapshots; no snapshot on signal",
                  s);
    else if (r == -EBUSY)
        fdr__warn("FDR_SNAPSHOT_SIGNAL=\"%s\" is a crash signal (FDR_CRASH_SIGNALS); "
                  "no snapshot on signal",
                  s);
    else if (r < 0)
        fdr__warn("FDR_SNAPSHOT_SIGNAL=\"%s\": %s", s, strerror(-r));
}
