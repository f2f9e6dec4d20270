/* SPDX-License-Identifier: MIT */
/* gate.h - the scope's door (gate.c): connections are held,
 * without a server slot, until they show the token. */
#ifndef FDR_SCOPE_GATE_H
#define FDR_SCOPE_GATE_H

#include <sys/socket.h>

struct scope_gate;

/* Called on the gate's thread with a connection whose first bytes hold the
 * token; it owns fd from then on. */
typedef void (*scope_gate_pass)(void *arg, int fd, const struct sockaddr *addr,
                                socklen_t alen);

/* Starts the gate's thread on the listening socket lfd (non-blocking; not
 * closed by the gate). 0 or -errno. */
int scope_gate_start(int lfd, const char *token, scope_gate_pass pass, void *arg,
                     struct scope_gate **out);

/* Stops the thread and closes every connection it still holds. */
void scope_gate_stop(struct scope_gate *g);

#endif
