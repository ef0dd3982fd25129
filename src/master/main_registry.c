/*
 * offerd-registry: offline work on a master's registry. One command:
 *
 *     offerd-registry copy FROM TO [--force]
 *
 * copies every entity of the registry FROM into TO, each "sqlite:<work_dir>"
 * or a zk:// URL; used to move a single master's SQLite registry into
 * ZooKeeper before starting masters with --registry=zk
 * (docs/ha-registry.md). Stop the masters first.
 */
#include "common/log.h"
#include "master/registry_copy.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

static int usage(FILE *out)
{
    fprintf(out,
            "usage: offerd-registry copy FROM TO [--force]\n"
            "  FROM, TO  sqlite:<work_dir> or zk://host:port[,host:port]/path\n"
            "  --force   replace what TO holds (refused by default when TO is "
            "not empty)\n");
    return out == stdout ? 0 : 2;
}

int main(int argc, char **argv)
{
    const char *args[2] = {NULL, NULL};
    int nargs = 0;
    bool force = false;
    if (argc >= 2 &&
        (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "help") == 0))
        return usage(stdout);
    if (argc < 2 || strcmp(argv[1], "copy") != 0)
        return usage(stderr);
    for (int i = 2; i < argc; i++) {
        if (strcmp(argv[i], "--force") == 0)
            force = true;
        else if (argv[i][0] == '-' || nargs == 2)
            return usage(stderr);
        else
            args[nargs++] = argv[i];
    }
    if (nargs != 2)
        return usage(stderr);

    char err[1024];
    const struct registry_backend *from_be, *to_be;
    const char *from, *to;
    if (registry_spec_parse(args[0], &from_be, &from, err, sizeof(err)) != 0 ||
        registry_spec_parse(args[1], &to_be, &to, err, sizeof(err)) != 0) {
        fprintf(stderr, "offerd-registry: %s\n", err);
        return 2;
    }
    size_t copied = 0;
    if (registry_copy(from_be, from, to_be, to, force, &copied, err,
                      sizeof(err)) != 0) {
        fprintf(stderr, "offerd-registry: %s\n", err);
        return 1;
    }
    printf("copied %zu entities from %s to %s\n", copied, args[0], args[1]);
    return 0;
}
