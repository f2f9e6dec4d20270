/* SPDX-License-Identifier: MIT */
/* session.c - (to come) */
#include "cli.h"

const struct cli_verb cli_verbs_session[] = {
    {0},
};
