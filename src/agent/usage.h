/*
 * Measuring what the agent's tasks really use, for the `usage` resource
 * estimator (estimator.h, oversub.h): CPU time and resident memory of each
 * task's processes, read from /proc.
 *
 * A task is its supervisor's child, which called setsid(): its pid leads
 * both its process group and its session. The processes of a task are
 * those whose process group or session is the task's pid (so a child that
 * moved into a process group of its own inside the session still counts).
 * A process that left the session (setsid again) escapes the measure, as it
 * escapes the kill.
 *
 * Per process: /proc/<pid>/stat gives utime, stime, cutime and cstime
 * (clock ticks; the children's times count once a member reaped them, so a
 * short-lived child's CPU time is not lost) and /proc/<pid>/statm the
 * resident set (pages). This is the fallback for tasks without a cgroup
 * (--isolation=posix); a task's cgroup, where it has one, counts every
 * process of the task (isolator.h, agent_iso_usage).
 *
 * Parsing is pure (unit-tested on crafted text); the scan takes the proc
 * root as an argument so tests run it on a crafted directory tree.
 */
#ifndef OFFERD_AGENT_USAGE_H
#define OFFERD_AGENT_USAGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Largest /proc/<pid>/stat or statm read (both are far shorter). */
#define AGENT_USAGE_MAX_FILE 4096

/* What one /proc/<pid>/stat line says that the estimator needs. */
struct agent_proc_stat {
    pid_t pid;
    char state;      /* 'R', 'S', 'Z' ... */
    pid_t pgrp;      /* process group id */
    pid_t session;   /* session id */
    uint64_t utime;  /* user CPU time, clock ticks */
    uint64_t stime;  /* system CPU time, clock ticks */
    uint64_t cutime; /* reaped children's user time, clock ticks */
    uint64_t cstime; /* reaped children's system time, clock ticks */
};

/* Parse the text of /proc/<pid>/stat (len bytes, need not be
 * NUL-terminated). The command name in parentheses may hold spaces and
 * parentheses: the fields are read after the last ')'. Returns 0 with *out
 * filled, or -1 when the text is not such a line (out untouched). */
int agent_usage_parse_stat(const char *text, size_t len,
                           struct agent_proc_stat *out);

/* Parse the text of /proc/<pid>/statm: "size resident shared text lib data
 * dt" in pages. Returns 0 with the resident pages in *resident, or -1. */
int agent_usage_parse_statm(const char *text, size_t len, uint64_t *resident);

/* What a task's processes use, summed over its processes. */
struct agent_usage {
    size_t nprocs;         /* processes found; 0: none (the task is gone) */
    uint64_t cpu_ticks;    /* utime + stime + cutime + cstime, clock ticks */
    uint64_t user_ticks;   /* utime + cutime: the user part of cpu_ticks */
    uint64_t system_ticks; /* stime + cstime: the system part */
    uint64_t rss_pages;    /* resident pages */
};

/* Scan proc_root ("/proc", or a crafted tree in tests) once and fill
 * out[i] (n entries, zeroed first) for the task led by leaders[i]: every
 * numeric directory whose stat parses and whose process group or session
 * is leaders[i] adds to it (a process whose statm is unreadable adds its
 * CPU time only). Entries that vanish mid-scan are skipped. Returns 0, or
 * -1 when proc_root cannot be read (out zeroed). */
int agent_usage_scan(const char *proc_root, const pid_t *leaders, size_t n,
                     struct agent_usage *out);

#endif
