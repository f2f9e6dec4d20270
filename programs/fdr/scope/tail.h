/* SPDX-License-Identifier: MIT */
/* tail.h - the scope's readers (tail.c): they fill the store (series.h)
 * from a live trace directory or a whole trace. */
#ifndef FDR_PROGRAMS_SCOPE_TAIL_H
#define FDR_PROGRAMS_SCOPE_TAIL_H

#include "series.h"

struct scope_tail;
/* Tails the trace directory dir, once it exists (its <name>-<pid>/ subdirectories) in a
 * thread of its own; punch: free what was read (the scope's own trace). */
int scope_tail_start(struct scope_db *db, const char *dir, int punch,
                     struct scope_tail **out);
void scope_tail_stop(struct scope_tail *t);
/* Opens the trace directory dir and reads it whole into db (replay) in a
 * thread of its own (db->done once read). 0, or an exit status after one
 * error line (the trace cannot be opened). */
struct scope_replay;
int scope_replay_start(struct scope_db *db, const char *dir, struct scope_replay **out);
/* Waits for the end of the reading and frees the replay (NULL: nothing). */
void scope_replay_stop(struct scope_replay *rp);
/* The clock of the trace dir/metadata into proc (locked). */
void scope_read_clock(struct scope_db *db, int proc, int dirfd);

#endif
