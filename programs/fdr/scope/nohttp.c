/* SPDX-License-Identifier: MIT */
/* nohttp.c - fdr scope's web server in a build without libmicrohttpd
 * (a cross build, a small target: programs/fdr/CMakeLists.txt). Everything
 * else of `fdr` works; scope says in one line why it cannot serve. */
#include <stddef.h>

#include "http.h"

int scope_http_start(struct scope_db *db, scope_control_fn ctl, void *ctl_arg,
                     const char *bind, unsigned port, const char *token,
                     struct scope_http **out, unsigned *port_out, const char **why)
{
    (void)db, (void)ctl, (void)ctl_arg, (void)bind, (void)port, (void)token,
        (void)port_out;
    *out = NULL;
    *why = "this fdr was built without libmicrohttpd: no web server for scope";
    return -1;
}

void scope_http_stop(struct scope_http *h)
{
    (void)h;
}
