/*
 * Replay driver for the fuzz targets: feeds every file under the directories
 * (or the files) named on the command line to LLVMFuzzerTestOneInput once.
 * Linked with each fuzz_*.c in every build, so ctest re-runs the stored corpus,
 * including inputs that once crashed, without needing clang or libFuzzer.
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int replay_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        perror(path);
        return -1;
    }
    if (fseek(f, 0, SEEK_END) != 0) {
        fclose(f);
        return -1;
    }
    long len = ftell(f);
    if (len < 0 || fseek(f, 0, SEEK_SET) != 0) {
        fclose(f);
        return -1;
    }
    /* One spare byte so that an empty file still gets a valid pointer. */
    uint8_t *buf = malloc((size_t)len + 1);
    if (buf == NULL) {
        fclose(f);
        return -1;
    }
    size_t got = fread(buf, 1, (size_t)len, f);
    fclose(f);
    if (got != (size_t)len) {
        free(buf);
        return -1;
    }
    LLVMFuzzerTestOneInput(buf, got);
    free(buf);
    return 0;
}

static int replay_path(const char *path, int *count)
{
    struct stat st;
    if (stat(path, &st) != 0) {
        perror(path);
        return -1;
    }
    if (!S_ISDIR(st.st_mode)) {
        (*count)++;
        return replay_file(path);
    }
    DIR *d = opendir(path);
    if (d == NULL) {
        perror(path);
        return -1;
    }
    int rc = 0;
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
        if (de->d_name[0] == '.')
            continue;
        char sub[4096];
        int n = snprintf(sub, sizeof(sub), "%s/%s", path, de->d_name);
        if (n < 0 || (size_t)n >= sizeof(sub)) {
            rc = -1;
            continue;
        }
        if (replay_path(sub, count) != 0)
            rc = -1;
    }
    closedir(d);
    return rc;
}

int main(int argc, char **argv)
{
    int count = 0, rc = 0;
    for (int i = 1; i < argc; i++)
        if (replay_path(argv[i], &count) != 0)
            rc = 1;
    printf("replayed %d inputs\n", count);
    return rc;
}
