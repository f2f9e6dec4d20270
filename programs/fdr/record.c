/* SPDX-License-Identifier: MIT */
/* record.c - (to come) */
#include "cli.h"

const struct cli_verb cli_verbs_record[] = {
    {0},
};
