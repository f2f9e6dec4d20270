/* SPDX-License-Identifier: MIT */
/* test-fdr-session-proto.c - unit test of lib/proto: the validator
 * fdr__proto_check (good messages of every kind, truncated, oversized, bad
 * version, unknown type, unterminated strings, malformed pattern items,
 * wrong fd counts), fd passing (fds received close-on-exec; a message with
 * more fds than asked for, or any fds when none are wanted, is refused and
 * every fd that came with it closed; a message longer than the buffer is
 * refused), the trace-name rule and the run-directory rule. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "check.h"
#include "proto/proto.h"

static uint64_t buf[FDR_PROTO_MSG_MAX / 8 * 2];

static int check_msg(const void *m, size_t len, int nfds)
{
    char why[256];
    return fdr__proto_check(m, len, nfds, why, sizeof why);
}

static int open_fds(void)
{
    int n = 0;
    DIR *d = opendir("/proc/self/fd");
    struct dirent *e;
    while ((e = readdir(d)))
        n += e->d_name[0] != '.';
    closedir(d);
    return n - 1; /* the DIR's own */
}

static void test_header(void)
{
    struct fdr__msg_hdr h;
    fdr__proto_init(&h, sizeof h, FDR__MSG_STATUS, 7);
    CHECK(check_msg(&h, sizeof h, 0) == 0);
    CHECK(h.seq == 7 && h.version == FDR_PROTO_VERSION);
    /* truncated: fewer bytes than a header, or than the size field says */
    CHECK(check_msg(&h, 10, 0) == -EBADMSG);
    CHECK(check_msg(&h, 0, 0) == -EBADMSG);
    struct fdr__msg_trace t;
    memset(&t, 0, sizeof t);
    fdr__proto_init(&t, sizeof t, FDR__MSG_START, 1);
    strcpy(t.name, "t");
    CHECK(check_msg(&t, sizeof t, 0) == 0);
    CHECK(check_msg(&t, sizeof t - 1, 0) == -EBADMSG);
    /* a size field that lies, both ways */
    t.h.size = sizeof t + 1;
    CHECK(check_msg(&t, sizeof t, 0) == -EBADMSG);
    t.h.size = sizeof t;
    /* oversized: size field and length agree but exceed the maximum */
    struct fdr__msg_items *big = (struct fdr__msg_items *)buf;
    memset(buf, 0, sizeof buf);
    fdr__proto_init(big, FDR_PROTO_MSG_MAX + 8, FDR__MSG_ENABLE, 1);
    CHECK(check_msg(big, FDR_PROTO_MSG_MAX + 8, 0) == -EBADMSG);
    /* bad version, unknown type */
    t.h.version = FDR_PROTO_VERSION + 1;
    char why[256], want[32];
    CHECK(fdr__proto_check(&t, sizeof t, 0, why, sizeof why) == -EBADMSG);
    snprintf(want, sizeof want, "version %d", FDR_PROTO_VERSION + 1);
    CHECK_MSG(strstr(why, want) != NULL, "why: %s", why);
    t.h.version = FDR_PROTO_VERSION;
    t.h.type = 999;
    CHECK(check_msg(&t, sizeof t, 0) == -EBADMSG);
    t.h.type = FDR__MSG_START;
    /* a fixed-size message of the wrong size */
    CHECK(check_msg(&h, sizeof h, 0) == 0);
    fdr__proto_init(&t, sizeof h, FDR__MSG_START, 1);
    CHECK(check_msg(&t, sizeof h, 0) == -EBADMSG);
}

static void test_strings(void)
{
    struct fdr__msg_create c;
    memset(&c, 0, sizeof c);
    fdr__proto_init(&c, sizeof c, FDR__MSG_CREATE, 1);
    CHECK(fdr__proto_set_str(c.name, sizeof c.name, "t1") == 0);
    CHECK(fdr__proto_set_str(c.outdir, sizeof c.outdir, "/tmp/x") == 0);
    CHECK(check_msg(&c, sizeof c, 0) == 0);
    memset(c.name, 'a', sizeof c.name); /* unterminated name */
    CHECK(check_msg(&c, sizeof c, 0) == -EBADMSG);
    fdr__proto_set_str(c.name, sizeof c.name, "t1");
    memset(c.outdir, 'a', sizeof c.outdir); /* unterminated path */
    CHECK(check_msg(&c, sizeof c, 0) == -EBADMSG);
    fdr__proto_set_str(c.outdir, sizeof c.outdir, "/tmp/x");
    memset(c.buffers, 'a', sizeof c.buffers); /* unterminated buffer directory */
    CHECK(check_msg(&c, sizeof c, 0) == -EBADMSG);
    c.buffers[0] = 0;
    CHECK(check_msg(&c, sizeof c, 0) == 0);
    char longname[100];
    memset(longname, 'x', sizeof longname - 1);
    longname[99] = 0;
    CHECK(fdr__proto_set_str(c.name, sizeof c.name, longname) == -ENAMETOOLONG);

    struct fdr__msg_reply r;
    memset(&r, 0, sizeof r);
    fdr__proto_init(&r, sizeof r, FDR__MSG_REPLY, 1);
    CHECK(check_msg(&r, sizeof r, 0) == 0);
    memset(r.text, 'z', sizeof r.text);
    CHECK(check_msg(&r, sizeof r, 0) == -EBADMSG);
}

static size_t items_msg(const char *const *items, int n, uint32_t nitems_field)
{
    struct fdr__msg_items *m = (struct fdr__msg_items *)buf;
    memset(buf, 0, sizeof buf);
    strcpy(m->name, "t1");
    size_t len = 0;
    for (int i = 0; i < n; i++) {
        size_t k = strlen(items[i]) + 1;
        memcpy(m->items + len, items[i], k);
        len += k;
    }
    m->nitems = nitems_field;
    m->len = (uint32_t)len;
    fdr__proto_init(m, sizeof *m + len, FDR__MSG_ENABLE, 1);
    return sizeof *m + len;
}

static void test_items(void)
{
    const char *const good[] = {"net:*", "-net:rx", "foo"};
    size_t len = items_msg(good, 3, 3);
    CHECK(check_msg(buf, len, 0) == 0);
    len = items_msg(good, 3, 2); /* bytes left after the count */
    CHECK(check_msg(buf, len, 0) == -EBADMSG);
    len = items_msg(good, 3, 4); /* count larger than the items */
    CHECK(check_msg(buf, len, 0) == -EBADMSG);
    len = items_msg(good, 3, 3);
    struct fdr__msg_items *m = (struct fdr__msg_items *)buf;
    m->items[len - sizeof *m - 1] = 'x'; /* last item unterminated */
    CHECK(check_msg(buf, len, 0) == -EBADMSG);
    const char *const empty[] = {"a", "", "b"};
    len = items_msg(empty, 3, 3);
    CHECK(check_msg(buf, len, 0) == -EBADMSG);
    char longitem[300];
    memset(longitem, 'a', 299);
    longitem[299] = 0;
    const char *const toolong[] = {longitem};
    len = items_msg(toolong, 1, 1);
    CHECK(check_msg(buf, len, 0) == -EBADMSG);
    len = items_msg(good, 3, 3);
    m->len += 1; /* len field disagrees with the bytes */
    CHECK(check_msg(buf, len, 0) == -EBADMSG);
    len = items_msg(good, 0, 0); /* no items: well formed */
    CHECK(check_msg(buf, len, 0) == 0);
}

static void test_fd_counts(void)
{
    struct fdr__msg_buffer b;
    memset(&b, 0, sizeof b);
    fdr__proto_init(&b, sizeof b, FDR__MSG_BUFFER, 1);
    CHECK(check_msg(&b, sizeof b, 1) == 0);
    CHECK(check_msg(&b, sizeof b, 0) == -EBADMSG);
    CHECK(check_msg(&b, sizeof b, 2) == -EBADMSG);
    struct fdr__msg_trace t;
    memset(&t, 0, sizeof t);
    fdr__proto_init(&t, sizeof t, FDR__MSG_STOP, 1);
    strcpy(t.name, "t");
    CHECK(check_msg(&t, sizeof t, 0) == 0);
    CHECK(check_msg(&t, sizeof t, 1) == -EBADMSG);
}

static void test_fdpass(void)
{
    int sv[2];
    REQUIRE(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) == 0);
    int p[2];
    REQUIRE(pipe(p) == 0);
    struct fdr__msg_buffer b;
    memset(&b, 0, sizeof b);
    fdr__proto_init(&b, sizeof b, FDR__MSG_BUFFER, 1);
    int fds[FDR_PROTO_FDS_MAX], nfds = -1;

    /* one fd asked for and received, close-on-exec */
    CHECK(fdr__proto_send(sv[0], &b, sizeof b, &p[0], 1) == 0);
    long n = fdr__proto_recv(sv[1], buf, sizeof buf, fds, &nfds, 1);
    CHECK(n == (long)sizeof b && nfds == 1);
    if (nfds == 1) {
        CHECK(fcntl(fds[0], F_GETFD) & FD_CLOEXEC);
        CHECK(check_msg(buf, (size_t)n, nfds) == 0);
        close(fds[0]);
    }

    /* fds when none are wanted: refused, and none of them stays open */
    int before = open_fds();
    int three[3] = {p[0], p[1], p[0]};
    CHECK(fdr__proto_send(sv[0], &b, sizeof b, three, 3) == 0);
    n = fdr__proto_recv(sv[1], buf, sizeof buf, fds, &nfds, 0);
    CHECK_MSG(n == -EBADMSG, "recv gave %ld", n);
    CHECK(nfds == 0);
    CHECK_MSG(open_fds() == before, "open fds %d, before %d", open_fds(), before);
    /* more than asked for */
    CHECK(fdr__proto_send(sv[0], &b, sizeof b, three, 3) == 0);
    n = fdr__proto_recv(sv[1], buf, sizeof buf, fds, &nfds, 2);
    CHECK(n == -EBADMSG && nfds == 0 && open_fds() == before);
    /* longer than the buffer */
    CHECK(fdr__proto_send(sv[0], &b, sizeof b, &p[0], 1) == 0);
    n = fdr__proto_recv(sv[1], buf, 20, fds, &nfds, 1);
    CHECK(n == -EMSGSIZE && nfds == 0 && open_fds() == before);
    /* nothing there: non-blocking socket gives -EAGAIN */
    fcntl(sv[1], F_SETFL, O_NONBLOCK);
    CHECK(fdr__proto_recv(sv[1], buf, sizeof buf, fds, &nfds, 0) == -EAGAIN);
    /* too many fds to send */
    int five[5] = {p[0], p[0], p[0], p[0], p[0]};
    CHECK(fdr__proto_send(sv[0], &b, sizeof b, five, 5) == -EINVAL);
    /* end of stream, and a peer gone: no SIGPIPE */
    close(sv[1]);
    CHECK(fdr__proto_send(sv[0], &b, sizeof b, NULL, 0) == -EPIPE);
    close(sv[0]);
    close(p[0]);
    close(p[1]);
}

static void test_names(void)
{
    char msg[256];
    const char *good[] = {"t", "a.b-c_d", "X9", "a..b"};
    for (size_t i = 0; i < sizeof good / sizeof *good; i++)
        CHECK_MSG(fdr__proto_trace_name_check(good[i], msg, sizeof msg) == 0, "%s",
                  good[i]);
    const char *bad[] = {
        "",     ".hidden",
        "-opt", "a/b",
        "..",   "a b",
        "ü",    "01234567890123456789012345678901234567890123456789012345678901234"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        CHECK_MSG(fdr__proto_trace_name_check(bad[i], msg, sizeof msg) == -EINVAL, "%s",
                  bad[i]);
        CHECK(strncmp(msg, "bad trace name '", 16) == 0);
    }
    fdr__proto_trace_name_check("a\nb", msg, sizeof msg);
    CHECK_MSG(strchr(msg, '\n') == NULL, "%s", msg);

    char dir[4096];
    CHECK(fdr__proto_rundir(dir, sizeof dir, "/x/y", "/run/user/1", "/h", 1, NULL, 0) ==
              4 &&
          strcmp(dir, "/x/y") == 0);
    CHECK(fdr__proto_rundir(dir, sizeof dir, "", "/run/user/1", "/h", 1, NULL, 0) > 0 &&
          strcmp(dir, "/run/user/1/fdr") == 0);
    CHECK(fdr__proto_rundir(dir, sizeof dir, NULL, NULL, NULL, 1000, NULL, 0) > 0 &&
          strcmp(dir, "/tmp/fdr-1000") == 0);
    char longdir[200];
    memset(longdir, 'd', sizeof longdir - 1);
    longdir[0] = '/';
    longdir[199] = 0;
    CHECK(fdr__proto_rundir(dir, sizeof dir, longdir, NULL, "/h", 1, NULL, 0) ==
          -ENAMETOOLONG);
}

int main(void)
{
    test_header();
    test_strings();
    test_items();
    test_fd_counts();
    test_fdpass();
    test_names();
    return check_status();
}
