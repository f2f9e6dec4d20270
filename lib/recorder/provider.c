/* SPDX-License-Identifier: MIT */
/* provider.c - explicit providers and generic raw events (fdr/provider.h).
 *
 * The design is LTT's user-space "facility": a provider is registered with
 * its name, number of events, checksum, alignment and the sizes of int,
 * long, pointer and size_t; events are (provider, event id, bytes).
 *
 * PROVIDER TABLE. A fixed table of FDR_PROVIDER_MAX records, without
 * pointers (the name is stored inline), each with a reference count; a
 * record with refs == 0 is free. A handle is the address of its record,
 * so the same provider always has the same handle, and a handle is checked
 * by bounds and alignment before use: a stale or made-up one gives -EINVAL,
 * never a crash. Because the table holds no pointer it can move to shared
 * memory unchanged when the daemon shares providers between processes;
 * only the mutex and the per-slot caches below are process-local.
 *
 * IDENTITY. Registering a registered name returns the same record, with
 * one more reference, when every field of the description is equal (LTT:
 * "even type sizes"); otherwise -EEXIST, with a stderr line naming the
 * field. The last unregister frees the record; free slots are taken
 * round-robin, so a freed handle is not soon reused.
 *
 * RAW EVENTS. Each (provider name, event id) gets, on first use, a heap
 * call site of kind FDR__SITE_RAW named "<provider>:event_<id>", with one
 * FDR__T_BYTES field `data` (u32 length + bytes). Being a site, it is
 * registered like any other (registry.c): it gets an event class, and the
 * recording and printing rules (FDR_EVENTS, FDR_TRACES) set its state.
 * Sites are never freed (the registry keeps them), and are found again by
 * name when a provider is registered anew. Recording goes through
 * fdr__reserve_raw() (writer.c), the slow path with the reason of a drop,
 * then fdr__commit_slow().
 *
 * ORDERING. Everything that changes the table or the caches holds `lock`.
 * fdr_raw_event() takes no lock once its site exists: it reads `refs` with
 * an acquire load (pairs with the release store at registration, so the
 * record's fields are seen complete) and the per-slot caches likewise. */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>

#include "fdr/fdr.h"
#include "common/format.h"
#include "common/provider.h"
#include "recorder/cold.h"
#include "recorder/config.h"
#include "recorder/init.h" /* enum fdr__fork_phase */
#include "recorder/provider.h"
#include "recorder/registry.h"
#include "recorder/writer.h"

struct fdr_provider {
    uint32_t refs; /* 0: free slot; atomic */
    struct fdr__provider_id id;
};

#define TABLE_MAGIC 0x46445250u /* "FDRP" */

static struct {
    uint32_t magic;
    uint32_t version;
    uint32_t n_records;
    uint32_t next; /* where the search for a free slot starts */
    struct fdr_provider rec[FDR_PROVIDER_MAX];
} table = {TABLE_MAGIC, 1, FDR_PROVIDER_MAX, 0, {{0}}};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
/* Slots from this one on were never taken (under lock): fdrd's look at the
 * table (fdr__provider_snapshot) stops there, and touches no page of
 * records a program never used (6 page faults at the start of a program
 * under fdrd, ~40 us each on a virtual machine). */
static uint32_t used;

static void changed_nothing(void) {}
void (*fdr__provider_changed_hook)(void) = changed_nothing;

uint32_t fdr__provider_snapshot(struct fdr__provider_id ids[FDR_PROVIDER_MAX])
{
    pthread_mutex_lock(&lock);
    uint32_t n = used;
    for (uint32_t i = 0; i < n; i++) {
        ids[i] = table.rec[i].id;
        if (table.rec[i].refs == 0)
            ids[i].name[0] = 0;
    }
    pthread_mutex_unlock(&lock);
    return n;
}

/* Around fork() (init.c): taken before the registry's, as in site_make. */
void fdr__provider_fork(enum fdr__fork_phase ph)
{
    if (ph == FDR__FORK_PREPARE)
        pthread_mutex_lock(&lock);
    else
        pthread_mutex_unlock(&lock);
}

/* Process-local: the site of each event id of a slot, filled on first use. */
struct site_cache {
    uint32_t n;
    struct fdr__site *site[]; /* atomic, NULL until first used */
};
static struct site_cache *cache[FDR_PROVIDER_MAX]; /* atomic pointers */

/* Process-local, never freed: every raw site made, by (provider, id). */
struct raw_site {
    struct fdr__site site;
    struct raw_site *next;
    uint32_t event_id;
    char provider[FDR_PROVIDER_NAME_MAX + 1];
    char event[24]; /* "event_65534" */
};
#define SITE_HASH 1024
static FDR__COLD struct raw_site *site_hash[SITE_HASH];

/* The slot of handle p, or -1 when p is not a record of the table. */
static int slot_of(const fdr_provider_t *p)
{
    uintptr_t a = (uintptr_t)p, b = (uintptr_t)&table.rec[0];
    if (a < b || a >= (uintptr_t)&table.rec[FDR_PROVIDER_MAX] ||
        (a - b) % sizeof(struct fdr_provider) != 0)
        return -1;
    return (int)((a - b) / sizeof(struct fdr_provider));
}

static int is_pow2_upto16(uint32_t v)
{
    return v >= 1 && v <= 16 && (v & (v - 1)) == 0;
}

/* Checks desc; warns (one line) and returns -EINVAL when it is not valid. */
static int check_desc(const fdr_provider_desc_t *d)
{
    static const char *const who = "fdr_provider_register";
    int too_big = 0;
#if SIZE_MAX > UINT32_MAX /* a 32-bit size_t cannot be too big */
    too_big = d->size > UINT32_MAX;
#endif
    if (d->size < sizeof(fdr_provider_desc_t) || too_big) {
        fdr__warn(
            "%s: desc->size is %zu, expected sizeof(fdr_provider_desc_t) = %zu (use "
            "FDR_PROVIDER_DESC_INIT)",
            who, d->size, sizeof(fdr_provider_desc_t));
        return -EINVAL;
    }
    if (!d->name || !d->name[0]) {
        fdr__warn("%s: the provider name is %s", who, d->name ? "empty" : "NULL");
        return -EINVAL;
    }
    size_t len = strnlen(d->name, FDR_PROVIDER_NAME_MAX + 1);
    if (len > FDR_PROVIDER_NAME_MAX) {
        fdr__warn("%s: provider name \"%.16s...\" is longer than %d bytes", who, d->name,
                  FDR_PROVIDER_NAME_MAX);
        return -EINVAL;
    }
    for (size_t i = 0; i < len; i++) {
        char c = d->name[i];
        int ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' ||
                 (i > 0 && c >= '0' && c <= '9');
        if (!ok) {
            fdr__warn(
                "%s: provider name \"%s\" is not an identifier ([A-Za-z_][A-Za-z0-9_]*)",
                who, d->name);
            return -EINVAL;
        }
    }
    if (d->nevents < 1 || d->nevents > FDR_PROVIDER_EVENTS_MAX) {
        fdr__warn("%s: provider \"%s\": nevents is %u, must be 1 to %d", who, d->name,
                  d->nevents, FDR_PROVIDER_EVENTS_MAX);
        return -EINVAL;
    }
    if (d->alignment != 0 && !is_pow2_upto16(d->alignment)) {
        fdr__warn("%s: provider \"%s\": alignment is %u, must be 0 or a power of two up "
                  "to 16",
                  who, d->name, d->alignment);
        return -EINVAL;
    }
    const struct {
        const char *what;
        uint32_t v;
    } sz[] = {{"sizeof_int", d->sizeof_int},
              {"sizeof_long", d->sizeof_long},
              {"sizeof_pointer", d->sizeof_pointer},
              {"sizeof_size_t", d->sizeof_size_t}};
    for (size_t i = 0; i < sizeof sz / sizeof sz[0]; i++) {
        if (!is_pow2_upto16(sz[i].v)) {
            fdr__warn(
                "%s: provider \"%s\": %s is %u, must be a power of two from 1 to 16", who,
                d->name, sz[i].what, sz[i].v);
            return -EINVAL;
        }
    }
    return 0;
}

int fdr_provider_register(const fdr_provider_desc_t *desc, fdr_provider_t **out)
{
    if (!desc || !out) {
        fdr__warn("fdr_provider_register: %s is NULL", desc ? "out" : "desc");
        return -EINVAL;
    }
    int r = check_desc(desc);
    if (r < 0)
        return r;
    struct fdr__provider_id want;
    fdr__provider_id_set(&want, desc);
    pthread_mutex_lock(&lock);
    int free_slot = -1;
    for (uint32_t k = 0; k < FDR_PROVIDER_MAX; k++) {
        uint32_t i = (table.next + k) % FDR_PROVIDER_MAX;
        struct fdr_provider *p = &table.rec[i];
        if (p->refs == 0) {
            if (free_slot < 0)
                free_slot = (int)i;
            continue;
        }
        if (strcmp(p->id.name, desc->name) != 0)
            continue;
        uint32_t was, now;
        const char *field = fdr__provider_id_differs(&p->id, &want, &was, &now);
        if (field) {
            pthread_mutex_unlock(&lock);
            fdr__warn("fdr_provider_register: provider \"%s\" is already registered with "
                      "%s %u (0x%x), not %u (0x%x): refused",
                      desc->name, field, was, was, now, now);
            return -EEXIST;
        }
        if (p->refs == UINT32_MAX) {
            pthread_mutex_unlock(&lock);
            fdr__warn("fdr_provider_register: provider \"%s\": too many references",
                      desc->name);
            return -ENOSPC;
        }
        __atomic_store_n(&p->refs, p->refs + 1, __ATOMIC_RELAXED);
        pthread_mutex_unlock(&lock);
        *out = p;
        return 0;
    }
    if (free_slot < 0) {
        pthread_mutex_unlock(&lock);
        fdr__warn("fdr_provider_register: provider \"%s\": %d providers are registered "
                  "already",
                  desc->name, FDR_PROVIDER_MAX);
        return -ENOSPC;
    }
    struct site_cache *c = calloc(1, sizeof *c + desc->nevents * sizeof c->site[0]);
    if (!c) {
        pthread_mutex_unlock(&lock);
        return -ENOMEM;
    }
    c->n = desc->nevents;
    struct fdr_provider *p = &table.rec[free_slot];
    p->id = want;
    /* Release pairs with the acquire load in fdr_raw_event(). */
    __atomic_store_n(&cache[free_slot], c, __ATOMIC_RELEASE);
    /* Observable: the record is complete; pairs with the acquire load of
     * refs in fdr_raw_event(). */
    __atomic_store_n(&p->refs, 1, __ATOMIC_RELEASE);
    table.next = (uint32_t)(free_slot + 1) % FDR_PROVIDER_MAX;
    if ((uint32_t)free_slot >= used)
        used = (uint32_t)free_slot + 1;
    pthread_mutex_unlock(&lock);
    fdr__provider_changed_hook();
    *out = p;
    return 0;
}

int fdr_provider_unregister(fdr_provider_t *p)
{
    int i = slot_of(p);
    pthread_mutex_lock(&lock);
    if (i < 0 || p->refs == 0) {
        pthread_mutex_unlock(&lock);
        fdr__warn("fdr_provider_unregister: %p is not a registered provider", (void *)p);
        return -EINVAL;
    }
    __atomic_store_n(&p->refs, p->refs - 1, __ATOMIC_RELAXED);
    struct site_cache *c = NULL;
    if (p->refs == 0) {
        c = cache[i];
        __atomic_store_n(&cache[i], (struct site_cache *)NULL, __ATOMIC_RELAXED);
        memset(p->id.name, 0, sizeof p->id.name);
        __atomic_store_n(&p->id.nevents, 0, __ATOMIC_RELAXED);
    }
    pthread_mutex_unlock(&lock);
    if (c)
        fdr__provider_changed_hook();
    free(c); /* the sites themselves stay: the registry keeps them */
    return 0;
}

/* Returns the site of event `id` of slot i (under the lock), made and
 * registered on first use; NULL when out of memory. */
static struct fdr__site *site_make(int i, uint32_t id)
{
    const struct fdr_provider *p = &table.rec[i];
    unsigned h = id;
    for (const char *c = p->id.name; *c; c++)
        h = h * 31 + (unsigned char)*c;
    h %= SITE_HASH;
    struct raw_site *rs = site_hash[h];
    while (rs && (rs->event_id != id || strcmp(rs->provider, p->id.name) != 0))
        rs = rs->next;
    if (!rs) {
        rs = calloc(1, sizeof *rs);
        if (!rs)
            return NULL;
        rs->event_id = id;
        memcpy(rs->provider, p->id.name, sizeof rs->provider);
        memcpy(rs->event, "event_", 6);
        fdr__fmt_u64(rs->event + 6, id, 10, 0);
        rs->site.state = FDR__S_NEW;
        rs->site.kind = FDR__SITE_RAW;
        rs->site.nargs = 1;
        rs->site.provider = rs->provider;
        rs->site.event = rs->event;
        rs->site.format = "data=%s";
        rs->site.names = "data";
        rs->site.file = "";
        rs->site.types[0] = FDR__T_BYTES;
        rs->next = site_hash[h];
        site_hash[h] = rs;
        fdr__site_register(&rs->site); /* lock order: ours, then the registry's */
    }
    return &rs->site;
}

size_t fdr__raw_event_max(void)
{
    size_t room =
        FDR__PKT_ROOM(fdr__cfg.packet_size) - FDR__EVENT_HEADER_SIZE - sizeof(uint32_t);
    return room < UINT32_MAX ? room : UINT32_MAX;
}

int fdr__raw_event(fdr_provider_t *p, unsigned event_id, const void *data, size_t size)
{
    int i = slot_of(p);
    /* Acquire pairs with the release store of refs at registration. */
    if (i < 0 || __atomic_load_n(&p->refs, __ATOMIC_ACQUIRE) == 0)
        return -EINVAL;
    if (event_id >= __atomic_load_n(&p->id.nevents, __ATOMIC_RELAXED) || (!data && size))
        return -EINVAL;
    if (size > fdr__raw_event_max())
        return -E2BIG;
    /* Acquire pairs with the release stores in fdr_provider_register() and
     * below: the cache and the site it points to are complete. */
    struct site_cache *c = __atomic_load_n(&cache[i], __ATOMIC_ACQUIRE);
    if (!c || event_id >= c->n)
        return -EINVAL;
    struct fdr__site *s = __atomic_load_n(&c->site[event_id], __ATOMIC_ACQUIRE);
    if (!s) {
        pthread_mutex_lock(&lock);
        s = c->site[event_id];
        if (!s) {
            s = site_make(i, event_id);
            __atomic_store_n(&c->site[event_id], s, __ATOMIC_RELEASE);
        }
        pthread_mutex_unlock(&lock);
        if (!s)
            return -ENOMEM;
    }
    int why;
    char *tail;
    char *d = fdr__reserve_raw(s, sizeof(uint32_t) + size, &why, &tail);
    if (!d)
        return why;
    uint32_t n = (uint32_t)size;
    memcpy(d, &n, sizeof n);
    if (size)
        memcpy(d + sizeof n, data, size);
    fdr__commit_slow(d + sizeof n + size, tail);
    return why; /* 0, or -ENOSPC for an event only printed */
}
