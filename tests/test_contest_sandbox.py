"""Attacks on the contest judge by compiled programs, checked from outside: each must fail, fail closed, and leave
nothing behind.

Most attacks are written so that the program prints the expected answer
only when every one of its attempts failed: ``AC`` means the sandbox held.
x86-64 programs (inline assembly); real bwrap, real compilers.
"""

from __future__ import annotations

import os
import platform
import time
from pathlib import Path

import pytest

from reward_plugins.contest.judge import Case, Checker, Compile, Problem, Program, jail_for, judge
from reward_plugins.contest.languages import LANGUAGES, missing
from reward_plugins.sandbox.bwrap import isolation

pytestmark = [
    pytest.mark.skipif(isolation().mode != "root", reason="the contest judge needs the code sandbox in root mode: "
                       f"{isolation().mode} ({isolation().reason or 'not root'})"),
    pytest.mark.skipif(platform.machine() != "x86_64", reason="the attacks use x86-64 system call numbers"),
    *[pytest.mark.skipif(bool(missing(LANGUAGES[name])), reason=str(missing(LANGUAGES[name])))
      for name in ("c", "cpp")],
]

SUITE = Path(__file__).parent / "data" / "contest" / "own" / "aplusb_interactive"
SYSCALL = r"""
#include <stdio.h>
static long sys(long n, long a, long b, long c) {
    long ret;
    __asm__ volatile ("syscall" : "=a"(ret) : "a"(n), "D"(a), "S"(b), "d"(c) : "rcx", "r11", "memory");
    return ret;
}
"""


def _judged(language: str, source: str, *, tests=(("", "blocked\n"),), **problem) -> list[str]:
    cases = tuple(Case(i, o) for i, o in tests)
    return judge(Program(LANGUAGES[language], source), Problem(cases, **problem),
                 deadline=time.monotonic() + 120).verdicts


def _host_processes(uids: tuple[int, ...]) -> list[int]:
    found = []
    for name in os.listdir("/proc"):
        try:
            if name.isdigit() and os.stat(f"/proc/{name}").st_uid in uids:
                found.append(int(name))
        except OSError:
            pass
    return found


def test_raw_syscalls_from_inline_assembly_are_refused():
    """socket (inet and unix), ptrace, mount, unshare, keyctl, bpf, setns: made with the syscall instruction, so no
    libc wrapper stands between the program and the filter."""
    source = SYSCALL + r"""
int main(void) {
    long got[] = {
        sys(41, 2, 1, 0),             /* socket(AF_INET, SOCK_STREAM) */
        sys(41, 1, 1, 0),             /* socket(AF_UNIX, SOCK_STREAM) */
        sys(101, 0, 0, 0),            /* ptrace(PTRACE_TRACEME) */
        sys(165, (long)"none", (long)"/tmp", (long)"tmpfs"),  /* mount */
        sys(272, 0x10000000, 0, 0),   /* unshare(CLONE_NEWUSER) */
        sys(250, 0, 0, 0),            /* keyctl */
        sys(321, 0, 0, 0),            /* bpf */
        sys(308, 0, 0, 0),            /* setns */
    };
    for (unsigned i = 0; i < sizeof got / sizeof *got; i++)
        if (got[i] >= 0) { printf("syscall %u succeeded\n", i); return 0; }
    puts("blocked");
    return 0;
}
"""
    assert _judged("c", source) == ["AC"]


def test_a_foreign_abi_syscall_kills_the_program():
    source = "int main(void){ long r; __asm__ volatile (\"int $0x80\" : \"=a\"(r) : \"a\"(20)); return 0; }"
    assert _judged("c", source) == ["RE"]


def test_writes_outside_the_work_folder_fail_and_the_cache_is_out_of_reach():
    source = r"""
#include <stdio.h>
#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>
int main(void) {
    const char *places[] = {"/tmp/x", "/tmp/work/x", "/tmp/work/cache/x", "/tmp/work/judge", "/usr/lib/x", "/etc/x",
                            "/dev/shm/x", "/proc/sys/kernel/hostname", "/tmp/work/io/in", "/tmp/work/io/out"};
    for (unsigned i = 0; i < sizeof places / sizeof *places; i++) {
        int fd = open(places[i], O_WRONLY | O_CREAT, 0644);
        if (fd >= 0) { printf("wrote %s\n", places[i]); return 0; }
    }
    if (opendir("/tmp/work/cache") || opendir("/tmp/work/io")) { puts("listed the cache"); return 0; }
    if (open("main", O_WRONLY) >= 0) { puts("can rewrite its own cached binary"); return 0; }
    puts("blocked");
    return 0;
}
"""
    assert _judged("c", source) == ["AC"]


@pytest.mark.slow
def test_a_fork_bomb_is_bounded_and_leaves_no_process():
    source = "#include <unistd.h>\nint main(void){ for (;;) fork(); }"
    jail = jail_for(frozenset({"c"}))
    verdicts = _judged("c", source, time_limit=1.0)
    assert verdicts[0] in ("RE", "TLE"), verdicts
    assert _host_processes(jail.host_uids) == []
    assert _judged("c", "#include <stdio.h>\nint main(void){ puts(\"blocked\"); }") == ["AC"]  # the judge still works


@pytest.mark.slow
def test_a_compile_time_bomb_is_a_compile_error_within_its_limits():
    bomb = """
template <int A, int B> struct G { static constexpr unsigned long v = G<A - 1, B>::v + G<A, B - 1>::v; };
template <int B> struct G<0, B> { static constexpr unsigned long v = 1; };
template <int A> struct G<A, 0> { static constexpr unsigned long v = 1; };
int main() { return G<440, 440>::v & 1; }  // 190,000 instantiations, each with its own constant
"""
    started = time.monotonic()
    report = judge(Program(LANGUAGES["cpp"], bomb), Problem((Case("", ""),)), deadline=time.monotonic() + 120,
                   compile_limits=Compile(seconds=5, memory=512 << 20))
    assert report.verdicts == ["CE"], report.compile_log
    assert any(sign in report.compile_log for sign in ("memory exhausted", "CPU time limit", "signal terminated",
                                                       "Killed")), report.compile_log[-500:]
    assert time.monotonic() - started < 60  # bounded by the compile limits (5 CPU s, 10 s wall), with room for load


def test_a_huge_binary_is_a_compile_error():
    source = "char big[1L << 30] = {1};\nint main(void){ return big[12345]; }"
    report = judge(Program(LANGUAGES["c"], source), Problem((Case("", ""),)), deadline=time.monotonic() + 120,
                   compile_limits=Compile(output=64 << 20))
    assert report.verdicts == ["CE"] and "File size limit exceeded" in report.compile_log, report.compile_log


@pytest.mark.slow
def test_the_interactor_cannot_be_killed_traced_or_read_by_the_program():
    """The program tries to kill every other process, to open each one's memory, to read the test's input and
    answer and write the judge's files; it answers right only if all of that failed, so AC means the interactor
    (a testlib one) survived untouched and kept its secrets."""
    source = r"""
#include <stdio.h>
#include <stdlib.h>
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>
int main(void) {
    int broke = 0;
    DIR *proc = opendir("/proc");
    struct dirent *e;
    while (proc && (e = readdir(proc))) {
        int pid = atoi(e->d_name);
        if (pid <= 0 || pid == getpid()) continue;
        char path[64];
        snprintf(path, sizeof path, "/proc/%d/mem", pid);
        if (open(path, O_RDWR) >= 0) broke = 1;
        snprintf(path, sizeof path, "/proc/%d/fd/0", pid);
        if (open(path, O_RDONLY) >= 0) broke = 1;
        if (kill(pid, SIGSTOP) == 0 || kill(pid, SIGKILL) == 0) broke = 1;
    }
    if (open("/tmp/work/judge/answer", O_WRONLY | O_CREAT, 0644) >= 0) broke = 1;
    if (open("/tmp/work/judge/answer", O_RDONLY) >= 0 || open("/tmp/work/judge/input", O_RDONLY) >= 0) broke = 1;
    if (open("/tmp/work/judge/feedback/tout", O_WRONLY | O_CREAT, 0644) >= 0) broke = 1;
    long long a, b;
    while (scanf("%lld %lld", &a, &b) == 2) { printf("%lld\n", broke ? a - b + 1 : a + b); fflush(stdout); }
    return 0;
}
"""
    tests = tuple(Case((SUITE / "data" / f"{k:02}.in").read_text(), (SUITE / "data" / f"{k:02}.ans").read_text())
                  for k in (1, 2))
    problem = Problem(tests, 1.0, interactor=Checker((("main.cpp", (SUITE / "interactor.cpp").read_text()),)),
                      checker=Checker((("main.cpp", (SUITE / "checker.cpp").read_text()),)))
    report = judge(Program(LANGUAGES["c"], source), problem, deadline=time.monotonic() + 120)
    assert report.verdicts == ["AC", "AC"], (report.verdicts, report.details)


def test_a_closed_jail_leaves_no_process_and_no_cgroup():
    jail = jail_for(frozenset({"cpp"}))
    judge(Program(LANGUAGES["cpp"], "int main(){}"), Problem((Case("", ""),)), deadline=time.monotonic() + 60)
    uids, dirs = jail.host_uids, list(jail.cgroup.dirs) if jail.cgroup else []
    pid = jail.process.pid
    jail.close()
    assert not os.path.exists(f"/proc/{pid}") or Path(f"/proc/{pid}/stat").read_text().split()[2] == "Z"
    assert _host_processes(uids) == []
    assert not any(d.exists() for d in dirs)


@pytest.mark.slow
def test_a_program_cannot_outlive_its_run_to_rewrite_what_the_checker_reads():
    """The program prints a wrong answer and leaves a child behind that keeps trying to write the right one into
    the judge's files; the checker (testlib's rcmp6) must see only what the program printed: WA."""
    circle = SUITE.parent / "circle"
    source = r"""
#include <stdio.h>
#include <fcntl.h>
#include <unistd.h>
int main(void) {
    if (fork() == 0) {
        setsid();
        for (;;) {
            const char *targets[] = {"/tmp/work/judge/output", "/tmp/work/checked", "/tmp/work/io/out"};
            for (int i = 0; i < 3; i++) {
                int fd = open(targets[i], O_WRONLY | O_TRUNC);
                if (fd >= 0) { write(fd, "3.1415926536\n", 13); close(fd); }
            }
        }
    }
    puts("0");
    return 0;
}
"""
    problem = Problem((Case((circle / "data" / "01.in").read_text(), (circle / "data" / "01.ans").read_text()),),
                      1.0, checker=Checker((("main.cpp", (circle / "checker.cpp").read_text()),)))
    jail = jail_for(frozenset({"c", "cpp"}))
    report = judge(Program(LANGUAGES["c"], source), problem, deadline=time.monotonic() + 120)
    assert report.verdicts == ["WA"], (report.verdicts, report.details)
    assert _host_processes(jail.host_uids) == []
