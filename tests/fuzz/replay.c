/* SPDX-License-Identifier: MIT */
/* replay.c - the main() of a fuzz target built without libFuzzer.
 *
 * Runs LLVMFuzzerTestOneInput once on each file named on the command line,
 * or on each file of a named directory, so that every build (gcc too, and
 * the sanitizer builds) replays the seed corpora as ordinary tests
 * (fuzz-pattern-replay, fuzz-gen-replay). Exits non-zero if a file cannot
 * be read or if no input was found. */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int replay_file(const char *path)
{
    FILE *f = fopen(path, "rbe");
    if (!f) {
        perror(path);
        return 1;
    }
    size_t cap = 4096, n = 0, got;
    uint8_t *data = malloc(cap);
    while (data && (got = fread(data + n, 1, cap - n, f)) > 0) {
        n += got;
        if (n == cap) {
            uint8_t *more = realloc(data, cap * 2);
            if (!more) {
                free(data);
                data = NULL;
                break;
            }
            data = more;
            cap *= 2;
        }
    }
    int err = ferror(f) || !data;
    fclose(f);
    if (!err)
        LLVMFuzzerTestOneInput(data, n);
    free(data);
    if (err)
        fprintf(stderr, "%s: read error\n", path);
    return err;
}

int main(int argc, char **argv)
{
    int rc = 0, files = 0;
    for (int i = 1; i < argc; i++) {
        DIR *d = opendir(argv[i]);
        if (!d) {
            rc |= replay_file(argv[i]);
            files++;
            continue;
        }
        struct dirent *e;
        while ((e = readdir(d))) {
            if (e->d_name[0] == '.')
                continue;
            char path[4096];
            snprintf(path, sizeof(path), "%s/%s", argv[i], e->d_name);
            rc |= replay_file(path);
            files++;
        }
        closedir(d);
    }
    printf("replayed %d inputs\n", files);
    return rc || files == 0;
}
