/* SPDX-License-Identifier: MIT */
/* client.h - the fdr command's side of fdrd's socket (programs/fdr only):
 * finding the run directory, connecting, starting fdrd when needed, one
 * request and its replies, and JSON strings. */
#ifndef FDR_PROGRAMS_CLIENT_H
#define FDR_PROGRAMS_CLIENT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "proto/proto.h"

struct client {
    int fd;
    uint32_t seq;
    const char *verb; /* for error lines: "fdr VERB: ..." */
    char rundir[4096];
    char sock[108];
    uint64_t buf[FDR_PROTO_MSG_MAX / 8]; /* the last message received */
};

/* Connects to fdrd for `verb`. With autostart, starts fdrd (`fdrd -d`)
 * when none runs. Returns 0 when connected; 1 after printing one error
 * line; -1 (nothing printed) when no fdrd runs and autostart is 0. */
int client_open(struct client *c, const char *verb, int autostart);
void client_close(struct client *c);

/* Sends the request msg[0..len) (its header is filled here) and waits for
 * its REPLY. Returns 0 if fdrd said yes; otherwise prints "fdr VERB: TEXT"
 * (fdrd's text, or what went wrong with the connection) and returns 1.
 * *value gets the reply's value (may be NULL). */
int client_call(struct client *c, void *msg, size_t len, unsigned type, uint32_t *value);

/* Sends a request whose answer is one or more messages; then
 * client_next() returns each (checked, with the request's seq) in c->buf:
 * its type, 0 at END, or -1 after printing an error line (a REPLY with an
 * error status is printed too). */
int client_send(struct client *c, void *msg, size_t len, unsigned type);
int client_next(struct client *c);

/* Steering a process through fdrd (the scope; docs/daemon.md). Both print
 * nothing: they return 0 or a positive errno value, with fdrd's one-line
 * reason in ((struct fdr__msg_reply *)c->buf)->text.
 * client_control: spec (items separated by ',') replaces the choice of
 * events recorded (what FDR__CONTROL_RECORD, as fdr_record_set) or printed
 * (FDR__CONTROL_PRINT, as fdr_trace_set; NAME=VALUE items set tunables) of
 * process pid. ESRCH: no such process registered. *ticket (may be NULL)
 * gets the control's number.
 * client_state: the state process pid last reported, one line per item
 * (proto.h, struct fdr__msg_state), '\n'-terminated, into out[0..cap)
 * (lines that do not fit are left out); fdrd also asks the process for a
 * new one, so calling it every second keeps it fresh. ESRCH, or ENODATA
 * when the process has not reported yet. *answers (may be NULL) gets the
 * number of the last control the report shows applied: a state with
 * answers >= a control's ticket is the program's state after it. */
int client_control(struct client *c, uint32_t pid, unsigned what, const char *spec,
                   uint32_t *ticket);
int client_state(struct client *c, uint32_t pid, char *out, size_t cap,
                 uint32_t *answers);

/* Prints s as a JSON string (quotes, escapes, \u00XX for control bytes;
 * bytes >= 0x80 that are not valid UTF-8 as \u00XX too). */
void json_str(FILE *f, const char *s);

#endif
