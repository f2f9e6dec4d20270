/* SPDX-License-Identifier: MIT */
/*
 * fdr-bench-count DIR... — counts the events of CTF traces with the real
 * reader (libbabeltrace2, src.ctf.fs), the way the sustained section of
 * fdr-bench checks "emitted = recorded + discarded".
 *
 * Prints one line:
 *     events <recorded> discarded <discarded> traces <n>
 * where <discarded> is the sum of the counts of the discarded-events
 * messages (what the tracer wrote in its packet contexts, fdr's and
 * LTTng's alike). Exit status 0, or 1 with a one-line error.
 *
 * Why C and not the bt2 Python bindings or the babeltrace2 CLI: Python
 * handles a few hundred thousand messages per second (minutes for the 50M
 * events of a sustained run), and sink.utils.counter counts discarded-events
 * *messages*, not the events they stand for.
 *
 * DESIGN. Every directory under the arguments that holds a `metadata` file
 * is one trace and gets its own src.ctf.fs component; every output port
 * (one per stream) gets its own simple sink, so no muxer sorts the
 * messages: counting needs no order.
 */
#define _XOPEN_SOURCE 700
#include <babeltrace2/babeltrace.h>
#include <ftw.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t n_events, n_discarded, n_unknown;

#define MAX_TRACES 64
static char *traces[MAX_TRACES];
static int n_traces;

static int find_trace(const char *path, const struct stat *st, int flag,
                      struct FTW *ftw)
{
    (void)st;
    if (flag == FTW_F && strcmp(path + ftw->base, "metadata") == 0 &&
        n_traces < MAX_TRACES) {
        traces[n_traces] = strdup(path);
        if (traces[n_traces] != NULL) {
            traces[n_traces][ftw->base > 0 ? ftw->base - 1 : 0] = '\0';
            n_traces++;
        }
    }
    return 0;
}

static bt_graph_simple_sink_component_consume_func_status
consume(bt_message_iterator *it, void *data)
{
    (void)data;
    bt_message_array_const msgs;
    uint64_t count;
    switch (bt_message_iterator_next(it, &msgs, &count)) {
    case BT_MESSAGE_ITERATOR_NEXT_STATUS_OK:
        break;
    case BT_MESSAGE_ITERATOR_NEXT_STATUS_END:
        return BT_GRAPH_SIMPLE_SINK_COMPONENT_CONSUME_FUNC_STATUS_END;
    case BT_MESSAGE_ITERATOR_NEXT_STATUS_AGAIN:
        return BT_GRAPH_SIMPLE_SINK_COMPONENT_CONSUME_FUNC_STATUS_AGAIN;
    default:
        return BT_GRAPH_SIMPLE_SINK_COMPONENT_CONSUME_FUNC_STATUS_ERROR;
    }
    for (uint64_t i = 0; i < count; i++) {
        const bt_message *m = msgs[i];
        bt_message_type t = bt_message_get_type(m);
        if (t == BT_MESSAGE_TYPE_EVENT) {
            n_events++;
        } else if (t == BT_MESSAGE_TYPE_DISCARDED_EVENTS) {
            uint64_t c;
            if (bt_message_discarded_events_get_count(m, &c) ==
                BT_PROPERTY_AVAILABILITY_AVAILABLE)
                n_discarded += c;
            else
                n_unknown++;
        }
        bt_message_put_ref(m);
    }
    return BT_GRAPH_SIMPLE_SINK_COMPONENT_CONSUME_FUNC_STATUS_OK;
}

static int count_trace(const bt_component_class_source *fs, const char *dir)
{
    int rc = 1;
    bt_graph *g = bt_graph_create(0);
    bt_value *params = bt_value_map_create();
    bt_value *inputs = NULL;
    if (g == NULL || params == NULL ||
        bt_value_map_insert_empty_array_entry(params, "inputs", &inputs) !=
            BT_VALUE_MAP_INSERT_ENTRY_STATUS_OK ||
        bt_value_array_append_string_element(inputs, dir) !=
            BT_VALUE_ARRAY_APPEND_ELEMENT_STATUS_OK)
        goto out;
    const bt_component_source *src;
    if (bt_graph_add_source_component(g, fs, "src", params,
                                      BT_LOGGING_LEVEL_ERROR, &src) !=
        BT_GRAPH_ADD_COMPONENT_STATUS_OK) {
        fprintf(stderr, "fdr-bench-count: %s: not a readable CTF trace\n", dir);
        goto out;
    }
    uint64_t nports = bt_component_source_get_output_port_count(src);
    for (uint64_t i = 0; i < nports; i++) {
        char name[32];
        snprintf(name, sizeof name, "sink%llu", (unsigned long long)i);
        const bt_component_sink *sink;
        if (bt_graph_add_simple_sink_component(g, name, NULL, consume, NULL,
                                               NULL, &sink) !=
            BT_GRAPH_ADD_COMPONENT_STATUS_OK)
            goto out;
        if (bt_graph_connect_ports(
                g, bt_component_source_borrow_output_port_by_index_const(src, i),
                bt_component_sink_borrow_input_port_by_index_const(sink, 0),
                NULL) != BT_GRAPH_CONNECT_PORTS_STATUS_OK)
            goto out;
    }
    bt_graph_run_status st;
    while ((st = bt_graph_run(g)) == BT_GRAPH_RUN_STATUS_AGAIN)
        ;
    if (st != BT_GRAPH_RUN_STATUS_OK) {
        fprintf(stderr, "fdr-bench-count: %s: babeltrace2 failed reading it\n",
                dir);
        goto out;
    }
    rc = 0;
out:
    bt_value_put_ref(params);
    bt_graph_put_ref(g);
    return rc;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: fdr-bench-count DIR...\n");
        return 2;
    }
    for (int i = 1; i < argc; i++)
        nftw(argv[i], find_trace, 16, FTW_PHYS);
    if (n_traces == 0) {
        fprintf(stderr, "fdr-bench-count: no CTF trace (metadata file) found\n");
        return 1;
    }
    const bt_plugin *ctf;
    if (bt_plugin_find("ctf", BT_TRUE, BT_TRUE, BT_TRUE, BT_TRUE, BT_TRUE,
                       &ctf) != BT_PLUGIN_FIND_STATUS_OK) {
        fprintf(stderr, "fdr-bench-count: babeltrace2 plugin 'ctf' not found\n");
        return 1;
    }
    const bt_component_class_source *fs =
        bt_plugin_borrow_source_component_class_by_name_const(ctf, "fs");
    int rc = fs == NULL;
    for (int i = 0; i < n_traces && rc == 0; i++)
        rc = count_trace(fs, traces[i]);
    bt_plugin_put_ref(ctf);
    if (rc != 0)
        return 1;
    printf("events %llu discarded %llu traces %d%s\n",
           (unsigned long long)n_events, (unsigned long long)n_discarded,
           n_traces, n_unknown ? " (some discarded counts unknown)" : "");
    return 0;
}
