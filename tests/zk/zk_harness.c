#include "zk_harness.h"

#include "common/netport.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define ZK_JAR     "/usr/share/java/zookeeper.jar"
#define ZK_LOG_JAR "/usr/share/java/slf4j-simple.jar"
#define ZK_MAIN    "org.apache.zookeeper.server.quorum.QuorumPeerMain"

struct zk_server {
    uint16_t client_port;
    uint16_t peer_port;
    uint16_t election_port;
    pid_t pid; /* 0 when not running */
    char cfg[512];
    char log[512];
};

struct zk_ensemble {
    int n;
    char dir[256];
    char hosts[ZK_HARNESS_MAX * 32];
    struct zk_server s[ZK_HARNESS_MAX];
};

static void set_err(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void set_err(char *err, size_t errlen, const char *fmt, ...)
{
    if (err == NULL || errlen == 0)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
}

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

static bool port_taken(const uint16_t *ports, int n, uint16_t p)
{
    for (int i = 0; i < n; i++)
        if (ports[i] == p)
            return true;
    return false;
}

/* Send a four-letter command to 127.0.0.1:port and read the answer into
 * out (NUL-terminated); -1 when the server does not answer in time. */
static int four_letter(uint16_t port, const char *cmd, char *out, size_t outlen)
{
    out[0] = '\0';
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -1;
    struct sockaddr_in a = {0};
    a.sin_family = AF_INET;
    a.sin_port = htons(port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(fd, (struct sockaddr *)&a, sizeof(a)) != 0 ||
        write(fd, cmd, strlen(cmd)) != (ssize_t)strlen(cmd)) {
        close(fd);
        return -1;
    }
    size_t got = 0;
    int64_t deadline = now_ms() + 1000;
    while (got + 1 < outlen) {
        int left = (int)(deadline - now_ms());
        if (left <= 0)
            break;
        struct pollfd pfd = {fd, POLLIN, 0};
        if (poll(&pfd, 1, left) <= 0)
            break;
        ssize_t r = read(fd, out + got, outlen - 1 - got);
        if (r <= 0)
            break;
        got += (size_t)r;
    }
    out[got] = '\0';
    close(fd);
    return got > 0 ? 0 : -1;
}

bool zk_server_serving(const struct zk_ensemble *z, int i)
{
    if (i < 0 || i >= z->n || z->s[i].pid == 0)
        return false;
    char buf[2048];
    if (four_letter(z->s[i].client_port, "srvr", buf, sizeof(buf)) != 0)
        return false;
    return strstr(buf, "Mode: standalone") != NULL ||
           strstr(buf, "Mode: leader") != NULL ||
           strstr(buf, "Mode: follower") != NULL;
}

bool zk_ensemble_wait_serving(const struct zk_ensemble *z, int timeout_ms)
{
    int64_t deadline = now_ms() + timeout_ms;
    for (;;) {
        bool all = true;
        for (int i = 0; i < z->n && all; i++)
            if (z->s[i].pid != 0 && !zk_server_serving(z, i))
                all = false;
        if (all)
            return true;
        if (now_ms() >= deadline)
            return false;
        sleep_ms(50);
    }
}

static int write_config(struct zk_ensemble *z, int i, char *err, size_t errlen)
{
    struct zk_server *s = &z->s[i];
    char data[300];
    snprintf(data, sizeof(data), "%s/data%d", z->dir, i);
    if (mkdir(data, 0700) != 0 && errno != EEXIST) {
        set_err(err, errlen, "zk harness: mkdir %s: %s", data, strerror(errno));
        return -1;
    }
    snprintf(s->cfg, sizeof(s->cfg), "%s/zoo%d.cfg", z->dir, i);
    snprintf(s->log, sizeof(s->log), "%s/zk%d.log", z->dir, i);
    FILE *f = fopen(s->cfg, "w");
    if (f == NULL) {
        set_err(err, errlen, "zk harness: %s: %s", s->cfg, strerror(errno));
        return -1;
    }
    fprintf(f,
            "tickTime=200\n"
            "initLimit=50\n"
            "syncLimit=25\n"
            "minSessionTimeout=400\n"
            "maxSessionTimeout=60000\n"
            "dataDir=%s\n"
            "clientPort=%u\n"
            "clientPortAddress=127.0.0.1\n"
            "admin.enableServer=false\n"
            "4lw.commands.whitelist=srvr,ruok,stat,mntr,cons\n"
            "maxClientCnxns=0\n"
            "autopurge.purgeInterval=0\n",
            data, s->client_port);
    if (z->n > 1)
        for (int j = 0; j < z->n; j++)
            fprintf(f, "server.%d=127.0.0.1:%u:%u\n", j + 1, z->s[j].peer_port,
                    z->s[j].election_port);
    fclose(f);
    if (z->n > 1) {
        char myid[320];
        snprintf(myid, sizeof(myid), "%s/myid", data);
        f = fopen(myid, "w");
        if (f == NULL) {
            set_err(err, errlen, "zk harness: %s: %s", myid, strerror(errno));
            return -1;
        }
        fprintf(f, "%d\n", i + 1);
        fclose(f);
    }
    return 0;
}

static int spawn(struct zk_ensemble *z, int i, char *err, size_t errlen)
{
    struct zk_server *s = &z->s[i];
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid < 0) {
        set_err(err, errlen, "zk harness: fork: %s", strerror(errno));
        return -1;
    }
    if (pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != parent)
            _exit(127);
        setpgid(0, 0);
        int fd = open(s->log, O_WRONLY | O_CREAT | O_APPEND, 0600);
        if (fd >= 0) {
            dup2(fd, 1);
            dup2(fd, 2);
            close(fd);
        }
        int devnull = open("/dev/null", O_RDONLY);
        if (devnull >= 0) {
            dup2(devnull, 0);
            close(devnull);
        }
        /* The sanitizers' runtime must not follow the test into java. */
        unsetenv("LD_PRELOAD");
        char logdir[300];
        snprintf(logdir, sizeof(logdir), "-Dzookeeper.log.dir=%s", z->dir);
        execl("/usr/bin/java", "java", "-Xmx256m", "-XX:+UseSerialGC",
              "-XX:TieredStopAtLevel=1", "-Xshare:auto",
              "-Djava.net.preferIPv4Stack=true",
              "-Dorg.slf4j.simpleLogger.defaultLogLevel=info",
              "-Dorg.slf4j.simpleLogger.showDateTime=true",
              "-Dzookeeper.jmx.log4j.disable=true", logdir, "-cp",
              ZK_JAR ":" ZK_LOG_JAR, ZK_MAIN, s->cfg, (char *)NULL);
        _exit(127);
    }
    s->pid = pid;
    return 0;
}

static int rm_entry(const char *path, const struct stat *sb, int flag,
                    struct FTW *ftw)
{
    (void)sb;
    (void)flag;
    (void)ftw;
    remove(path);
    return 0;
}

static void kill_server(struct zk_server *s)
{
    if (s->pid == 0)
        return;
    kill(-s->pid, SIGKILL);
    kill(s->pid, SIGKILL);
    while (waitpid(s->pid, NULL, 0) < 0 && errno == EINTR)
        ;
    s->pid = 0;
}

struct zk_ensemble *zk_ensemble_start(int n, int timeout_ms, char *err,
                                      size_t errlen)
{
    if (n < 1 || n > ZK_HARNESS_MAX) {
        set_err(err, errlen, "zk harness: %d servers (1..%d)", n,
                ZK_HARNESS_MAX);
        return NULL;
    }
    if (access(ZK_JAR, R_OK) != 0 || access("/usr/bin/java", X_OK) != 0) {
        set_err(err, errlen,
                "zk harness: %s or /usr/bin/java missing (Debian's "
                "zookeeper package; scripts/install-deps.sh)",
                ZK_JAR);
        return NULL;
    }
    struct zk_ensemble *z = calloc(1, sizeof(*z));
    if (z == NULL) {
        set_err(err, errlen, "zk harness: out of memory");
        return NULL;
    }
    z->n = n;
    const char *tmp = getenv("TMPDIR");
    snprintf(z->dir, sizeof(z->dir), "%s/offerd-zk-XXXXXX",
             tmp && *tmp ? tmp : "/tmp");
    if (mkdtemp(z->dir) == NULL) {
        set_err(err, errlen, "zk harness: mkdtemp: %s", strerror(errno));
        free(z);
        return NULL;
    }
    uint16_t taken[3 * ZK_HARNESS_MAX];
    int nt = 0;
    for (int i = 0; i < n; i++) {
        uint16_t *ports[3] = {&z->s[i].client_port, &z->s[i].peer_port,
                              &z->s[i].election_port};
        for (int k = 0; k < 3; k++) {
            uint16_t p;
            int tries = 0;
            do
                p = netport_free_loopback();
            while ((p == 0 || port_taken(taken, nt, p)) && ++tries < 50);
            if (p == 0 || port_taken(taken, nt, p)) {
                set_err(err, errlen, "zk harness: no free port");
                zk_ensemble_stop(z);
                return NULL;
            }
            taken[nt++] = p;
            *ports[k] = p;
        }
    }
    size_t off = 0;
    for (int i = 0; i < n; i++)
        off += (size_t)snprintf(z->hosts + off, sizeof(z->hosts) - off,
                                "%s127.0.0.1:%u", i ? "," : "",
                                z->s[i].client_port);
    for (int i = 0; i < n; i++)
        if (write_config(z, i, err, errlen) != 0 ||
            spawn(z, i, err, errlen) != 0) {
            zk_ensemble_stop(z);
            return NULL;
        }
    if (!zk_ensemble_wait_serving(z, timeout_ms)) {
        set_err(err, errlen,
                "zk harness: %d server(s) not serving within %d ms (logs "
                "in %s)",
                n, timeout_ms, z->dir);
        zk_ensemble_dump_logs(z, 2000);
        zk_ensemble_stop(z);
        return NULL;
    }
    return z;
}

int zk_ensemble_size(const struct zk_ensemble *z)
{
    return z->n;
}

const char *zk_ensemble_hosts(const struct zk_ensemble *z)
{
    return z->hosts;
}

int zk_ensemble_url(const struct zk_ensemble *z, const char *path, char *out,
                    size_t outlen)
{
    int w = snprintf(out, outlen, "zk://%s%s", z->hosts, path);
    return w < 0 || (size_t)w >= outlen ? -1 : 0;
}

uint16_t zk_server_port(const struct zk_ensemble *z, int i)
{
    return i >= 0 && i < z->n ? z->s[i].client_port : 0;
}

const char *zk_ensemble_dir(const struct zk_ensemble *z)
{
    return z->dir;
}

int zk_server_stop(struct zk_ensemble *z, int i)
{
    if (i < 0 || i >= z->n || z->s[i].pid == 0)
        return -1;
    kill_server(&z->s[i]);
    return 0;
}

int zk_server_start(struct zk_ensemble *z, int i, int timeout_ms)
{
    if (i < 0 || i >= z->n || z->s[i].pid != 0)
        return -1;
    if (spawn(z, i, NULL, 0) != 0)
        return -1;
    int64_t deadline = now_ms() + timeout_ms;
    while (!zk_server_serving(z, i)) {
        if (now_ms() >= deadline)
            return -1;
        sleep_ms(50);
    }
    return 0;
}

int zk_server_pause(struct zk_ensemble *z, int i)
{
    if (i < 0 || i >= z->n || z->s[i].pid == 0)
        return -1;
    return kill(z->s[i].pid, SIGSTOP);
}

int zk_server_resume(struct zk_ensemble *z, int i)
{
    if (i < 0 || i >= z->n || z->s[i].pid == 0)
        return -1;
    return kill(z->s[i].pid, SIGCONT);
}

void zk_ensemble_dump_logs(const struct zk_ensemble *z, size_t max_bytes)
{
    for (int i = 0; i < z->n; i++) {
        FILE *f = fopen(z->s[i].log, "r");
        if (f == NULL)
            continue;
        fseek(f, 0, SEEK_END);
        long size = ftell(f);
        long from = size > (long)max_bytes ? size - (long)max_bytes : 0;
        fseek(f, from, SEEK_SET);
        fprintf(stderr, "---- zookeeper server %d (%s), last %ld bytes\n", i,
                z->s[i].log, size - from);
        char buf[4096];
        size_t r;
        while ((r = fread(buf, 1, sizeof(buf), f)) > 0)
            fwrite(buf, 1, r, stderr);
        fclose(f);
    }
}

void zk_ensemble_stop(struct zk_ensemble *z)
{
    if (z == NULL)
        return;
    for (int i = 0; i < z->n; i++)
        kill_server(&z->s[i]);
    if (z->dir[0] != '\0')
        nftw(z->dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
    free(z);
}
