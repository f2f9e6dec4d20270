/* SPDX-License-Identifier: MIT */
/* log.h - fdrd's log: one line per event, on stderr (the terminal with
 * -f, DIR/fdrd.log with -d). */
#ifndef FDRD_LOG_H
#define FDRD_LOG_H

/* Writes "YYYY-mm-dd HH:MM:SS fdrd[PID]: message\n" to fd 2 in one
 * write(); control characters of the message are shown as '?'. */
void fdrd_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
