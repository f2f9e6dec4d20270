/* SPDX-License-Identifier: MIT */
/* log.c - fdrd's log lines.
 *
 * The daemon logs what a person debugging it needs and nothing per
 * message: start and stop, connections refused (another uid, too many
 * clients), messages rejected (with the validator's reason), clients
 * dropped, traces created and destroyed. Each line is built whole and
 * written with one write() to fd 2 (stderr in the foreground, the log file
 * when daemonized: main.c points fd 2 there), so lines never interleave.
 * A line is cut at 1 KiB; control characters in it (from a client's
 * strings) become '?', so a client cannot forge log lines. */
#define _GNU_SOURCE
#include "log.h"

#include <stdarg.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#include "common/io.h"

void fdrd_log(const char *fmt, ...)
{
    char line[1024];
    time_t now = time(NULL);
    struct tm tm;
    localtime_r(&now, &tm);
    size_t n = strftime(line, sizeof line, "%Y-%m-%d %H:%M:%S", &tm);
    n += (size_t)snprintf(line + n, sizeof line - n, " fdrd[%ld]: ", (long)getpid());
    size_t start = n;
    va_list ap;
    va_start(ap, fmt);
    int m = vsnprintf(line + n, sizeof line - n - 1, fmt, ap);
    va_end(ap);
    if (m < 0)
        m = 0;
    n += (size_t)m;
    if (n > sizeof line - 2)
        n = sizeof line - 2;
    for (size_t i = start; i < n; i++)
        if ((unsigned char)line[i] < 0x20 || line[i] == 0x7f)
            line[i] = '?';
    line[n++] = '\n';
    (void)fdr__write_full(2, line, n);
}
