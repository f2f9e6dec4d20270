/* SPDX-License-Identifier: MIT */
/* offline.c - (to come) */
#include "cli.h"

const struct cli_verb cli_verbs_offline[] = {
    {0},
};
