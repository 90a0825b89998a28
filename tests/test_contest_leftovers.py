"""Nothing one contest program leaves behind changes a later program's verdict (issue 36), checked from outside.

One test per class of the red team's report: each runs hostile programs
(other instances than the report's) in the warm sandbox that every row of
a worker shares, then an honest program, whose verdict must be the one a
fresh sandbox gives.  Verdicts are read as the reward reads them, from
:func:`judge`; programs measure their own work in CPU time, never wall time,
so a busy machine changes no verdict.  Real bwrap, real compilers, x86-64.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import platform
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from reward_plugins.contest.judge import JAIL, MIB, Case, Problem, Program, jail_for, judge
from reward_plugins.contest.languages import LANGUAGES, missing
from reward_plugins.sandbox.bwrap import isolation
from reward_plugins.sandbox.cgroup import Cgroup

pytestmark = [
    pytest.mark.skipif(isolation().mode != "root", reason="the contest judge needs the code sandbox in root mode: "
                       f"{isolation().mode} ({isolation().reason or 'not root'})"),
    pytest.mark.skipif(platform.machine() != "x86_64", reason="the attacks use x86-64 system call numbers"),
    pytest.mark.skipif(bool(missing(LANGUAGES["c"])), reason=str(missing(LANGUAGES["c"]))),
    pytest.mark.timeout(600),
]

ANSWER = (("", "ok\n"),)
HEAD = """
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/inotify.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
static int fill_files(int mib) {  /* files of 8 MiB each (a file's size is capped at the output limit) */
    static char block[1 << 20];
    memset(block, 7, sizeof block);
    char name[32];
    for (int k = 0; k * 8 < mib; k++) {
        snprintf(name, sizeof name, "file%d", k);
        int fd = open(name, O_WRONLY | O_CREAT, 0600);
        for (int m = 0; m < 8; m++) if (fd < 0 || write(fd, block, sizeof block) <= 0) return k;
        close(fd);
    }
    return -1;
}
static void spin(double seconds) {  /* CPU time, not wall time: a busy machine makes it no shorter */
    clock_t start = clock();
    while ((double)(clock() - start) / CLOCKS_PER_SEC < seconds) {}
}
"""
LEAVE_SOCKETS = """
static void leave_sockets(int pairs) {  /* each pair filled, sent through itself and closed: alive only in flight */
    static char block[65536];
    for (int k = 0; k < pairs; k++) {
        int sv[2];
        if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv)) return;
        fcntl(sv[0], F_SETFL, O_NONBLOCK);
        while (write(sv[0], block, sizeof block) > 0) {}
        char byte = 'x', control[CMSG_SPACE(2 * sizeof(int))];
        struct iovec io = {&byte, 1};
        struct msghdr msg = {0};
        msg.msg_iov = &io; msg.msg_iovlen = 1; msg.msg_control = control; msg.msg_controllen = sizeof control;
        struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
        c->cmsg_level = SOL_SOCKET; c->cmsg_type = SCM_RIGHTS; c->cmsg_len = CMSG_LEN(2 * sizeof(int));
        memcpy(CMSG_DATA(c), sv, 2 * sizeof(int));
        sendmsg(sv[1], &msg, MSG_DONTWAIT);
        close(sv[0]); close(sv[1]);
    }
}
"""


def _check(found: list[str], expected: list[str]) -> None:
    assert found == expected


def _sockets_in(jail) -> int | None:
    """Unix sockets alive in the warm sandbox's network namespace, read from the host (its server's
    ``/proc/PID/net/unix``): what the sandbox's own check compares with its baseline. None: no sandbox is up."""
    if jail.process is None:
        return None
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            if str(JAIL).encode() not in Path(f"/proc/{pid}/cmdline").read_bytes() or not _descends(
                    int(pid), jail.process.pid):
                continue
            return Path(f"/proc/{pid}/net/unix").read_text().count("\n") - 1
        except OSError:
            continue
    raise AssertionError("the warm sandbox's server is not among its process's descendants")


def _descends(pid: int, ancestor: int) -> bool:
    while pid > 1:
        if pid == ancestor:
            return True
        pid = int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
    return False


def _until_rebuilt(jail, hostile) -> None:
    """Runs ``hostile`` (a program leaving unix sockets in flight, with its own assertions) until the sandbox is
    seen rebuilt for it, checking each time that a sandbox kept warm holds no socket beyond what it held before.

    Whether the sockets are there when the sandbox checks is the kernel's doing: its unix garbage collector
    reclaims a cycle of sockets in flight whenever any process on the host closes a unix socket (other tests,
    other jobs; on a loaded machine it often wins the race with the sandbox's check, and it has emptied the
    sandbox by the time the host reads it), and a sandbox whose sockets were reclaimed is clean and rightly kept.
    So the rebuild is tried up to ten times, the hostile program's own assertions hold every time, and a skip,
    shown in pytest's summary, says when the rebuild was never reached (a sandbox that stopped checking its
    sockets would show as that skip, not as a failure: the kernel leaves nothing to tell the two apart)."""
    for _ in range(10):
        jail.start()
        before, starts = _sockets_in(jail), jail.starts
        hostile()
        if jail.starts > starts or jail.process is None:  # found unclean: rebuilt (or closed, rebuilt next time)
            return
        assert _sockets_in(jail) == before, "a sandbox kept warm holds unix sockets a program left in flight"
    pytest.skip("the sockets left in flight were gone by the sandbox's check, ten times (the kernel reclaims them "
                "when any process closes a unix socket): the rebuild was not reached")


def _judged(source: str, tests=ANSWER, **problem) -> list[str]:
    cases = tuple(Case(i, o) for i, o in tests)
    return judge(Program(LANGUAGES["c"], HEAD + source), Problem(cases, **problem),
                 deadline=time.monotonic() + 300).verdicts


def _honest() -> str:
    """An honest program never compiled before (a fresh comment: its own hash), so it compiles after the attack."""
    return f"/* {uuid.uuid4().hex} */\nint main(void) {{ char *a = malloc(8 << 20); memset(a, 1, 8 << 20); " \
           "puts(\"ok\"); return a[5] - 1; }\n"


def test_what_a_program_leaves_in_the_work_folder_reaches_no_later_program():
    """Inodes and space exhausted (an honest program then failed to compile, and the error was cached), a chain of
    folders too deep for a recursive cleanup (the next program's tests were judge errors), and a sandbox rebuilt
    in the middle of a program's tests (its later tests were judge errors: the artifact was gone)."""
    fill = r"""
int main(void) {
    char name[32];
    for (int k = 0; k < 20000; k++) { snprintf(name, sizeof name, "f%d", k); if (mkdir(name, 0700)) break; }
    fill_files(2000);
    puts("ok");
    return 0;
}
"""
    assert _judged(fill, memory=1536 * MIB, writable=True) != ["JE"]
    assert _judged(_honest()) == ["AC"]
    deep = r"""
int main(void) {
    for (int k = 0; k < 6000 && mkdir("d", 0700) == 0 && chdir("d") == 0; k++) {}
    chmod(".", 0);
    puts("ok");
    return 0;
}
"""
    assert _judged(deep, writable=True) == ["AC"]
    assert _judged(_honest()) == ["AC"]
    jail = jail_for(frozenset({"c"}))
    midway = LEAVE_SOCKETS + r"""
int main(void) {
    char word[16] = "";
    if (scanf("%15s", word) == 1 && strcmp(word, "leave") == 0) {
        for (int k = 0; k < 6000 && mkdir("d", 0700) == 0 && chdir("d") == 0; k++) {}
        leave_sockets(4);
    }
    puts("ok");
    return 0;
}
"""
    tests = (("leave\n", "ok\n"), ("stay\n", "ok\n"), ("stay\n", "ok\n"))
    # the sockets left make the sandbox unclean: rebuilt after the first test, and the program built again
    _until_rebuilt(jail, lambda: _check(_judged(f"/* {uuid.uuid4().hex} */" + midway, tests, writable=True),
                                        ["AC", "AC", "AC"]))


def test_what_a_program_leaves_charged_to_memory_reaches_no_later_program():
    """Files left in a high-memory row (the next, lower row's bound could not be set: judge errors) and sockets
    kept in flight with SCM_RIGHTS holding hundreds of MiB (a later honest program was killed)."""
    files = r"""
int main(void) {
    fill_files(960);
    puts("ok");
    return 0;
}
"""
    _judged(files, memory=2048 * MIB, writable=True)
    assert _judged(_honest(), memory=64 * MIB) == ["AC"]
    jail = jail_for(frozenset({"c"}))
    sockets = LEAVE_SOCKETS + "int main(void) { leave_sockets(200); puts(\"ok\"); return 0; }\n"
    _until_rebuilt(jail, lambda: _judged(sockets, memory=2048 * MIB))  # the sockets in flight are found
    honest = _honest().replace("8 << 20", "40 << 20")
    assert _judged(honest, memory=64 * MIB) == ["AC"]  # in a fresh sandbox, or one the kernel emptied


def test_the_limits_count_the_whole_process_tree_and_its_files():
    """CPU burnt by a child never waited for, memory held across children each under the limit, and files written
    in the folder: each counts against the row's limits, as DOMjudge, CMS and DMOJ count them."""
    orphan = r"""
int main(void) {
    int ready[2];
    if (pipe(ready)) return 1;
    if (fork() == 0) { spin(0.7); write(ready[1], "x", 1); pause(); }
    spin(0.7);
    char x;
    read(ready[0], &x, 1);  /* the child burnt its share; never waited for */
    puts("ok");
    return 0;
}
"""
    assert _judged(orphan, time_limit=1.0) == ["TLE"]
    children = r"""
int main(void) {
    int ready[2];
    if (pipe(ready)) return 1;
    for (int k = 0; k < 3; k++)
        if (fork() == 0) { char *a = malloc(44 << 20); memset(a, 1, 44 << 20); write(ready[1], "x", 1); pause(); }
    char x;
    for (int k = 0; k < 3; k++) read(ready[0], &x, 1);
    puts("ok");
    return 0;
}
"""
    assert _judged(children, memory=64 * MIB) == ["MLE"]
    files = r"""
int main(void) {
    fill_files(300);
    puts("ok");
    return 0;
}
"""
    assert _judged(files, memory=64 * MIB, writable=True) == ["MLE"]
    assert _judged(_honest(), memory=64 * MIB, time_limit=1.0) == ["AC"]


def test_no_scheduling_attribute_of_another_process_can_be_set():
    """sched_setattr, sched_setscheduler, sched_setparam, setpriority and prlimit on the server (the program's
    parent) and on every other pid fail, so nothing a program sets there is read back by a later one."""
    source = r"""
int main(void) {
    int changed = 0;
    struct sched_param param = {0};
    unsigned attr[14] = {56, SCHED_BATCH};  /* struct sched_attr: size, policy */
    struct rlimit low = {1 << 20, 1 << 20};
    for (pid_t pid = 1; pid < 64; pid++) {
        if (pid == getpid()) continue;
        changed |= syscall(SYS_sched_setattr, pid, attr, 0) == 0;
        changed |= sched_setscheduler(pid, SCHED_IDLE, &param) == 0;
        changed |= sched_setparam(pid, &param) == 0;
        changed |= setpriority(PRIO_PROCESS, pid, 19) == 0;
        changed |= prlimit(pid, RLIMIT_NOFILE, &low, NULL) == 0;
    }
    if (fork() == 0) { setpriority(PRIO_PROCESS, getppid(), 19); _exit(0); }
    wait(NULL);
    changed |= getpriority(PRIO_PROCESS, 0) != 0;
    puts(changed ? "changed" : "ok");
    return 0;
}
"""
    assert _judged(source) == ["AC"]
    look = r"""
int main(void) {
    unsigned attr[14] = {0};
    syscall(SYS_sched_getattr, getppid(), attr, sizeof attr, 0);
    printf("%u %u %d\n", attr[1], attr[4], getpriority(PRIO_PROCESS, 0));
    return 0;
}
"""
    assert _judged(look, (("", "0 0 0\n"),)) == ["AC"]


def test_no_lock_or_watch_on_a_shared_file_is_possible():
    """Byte-range locks (classic and open-file-description), whole-file locks, leases and watches on files that every
    sandbox binds read-only are visible to programs in other sandboxes: a covert channel between two programs
    scored at once.  Every such call fails at run time."""
    source = r"""
int main(void) {
    int got = 0;
    const char *shared[] = {"/etc/ld.so.cache", "main", "/dev/null"};
    for (unsigned k = 0; k < sizeof shared / sizeof *shared; k++) {
        int fd = open(shared[k], O_RDONLY);
        if (fd < 0) continue;
        struct flock lock = {.l_type = F_RDLCK, .l_whence = SEEK_SET, .l_start = k, .l_len = 1};
        got |= fcntl(fd, F_SETLK, &lock) == 0;
        got |= fcntl(fd, F_OFD_SETLK, &lock) == 0;
        got |= fcntl(fd, F_GETLK, &lock) == 0;
        got |= flock(fd, LOCK_SH | LOCK_NB) == 0;
        got |= fcntl(fd, F_SETLEASE, F_RDLCK) == 0;
    }
    int watch = inotify_init1(0);
    got |= watch >= 0 && inotify_add_watch(watch, "/etc/ld.so.cache", IN_OPEN) >= 0;
    int folder = open("/tmp", O_RDONLY | O_DIRECTORY);
    got |= fcntl(folder, F_NOTIFY, DN_ACCESS) == 0;
    puts(got ? "locked" : "ok");
    return 0;
}
"""
    assert _judged(source) == ["AC"]
    assert _judged(_honest()) == ["AC"]


def test_a_batch_program_creates_no_file_and_opens_no_device_but_the_plain_ones():
    """As the reference judges rule: a batch program's folder is read-only (a row declares file I/O to have it
    writable), and /dev holds null, zero and urandom only."""
    source = r"""
int main(void) {
    int broke = 0;
    broke |= open("answer.txt", O_WRONLY | O_CREAT, 0600) >= 0;
    broke |= mkdir("folder", 0700) == 0;
    broke |= symlink("/etc/ld.so.cache", "link") == 0;
    const char *denied[] = {"/dev/tty", "/dev/full", "/dev/random", "/dev/ptmx", "/dev/console", "/dev/pts/ptmx"};
    for (unsigned k = 0; k < sizeof denied / sizeof *denied; k++) broke |= open(denied[k], O_RDWR) >= 0;
    char byte;
    int zero = open("/dev/zero", O_RDONLY), random = open("/dev/urandom", O_RDONLY), null = open("/dev/null", O_WRONLY);
    broke |= read(zero, &byte, 1) != 1 || byte != 0 || read(random, &byte, 1) != 1 || write(null, "x", 1) != 1;
    puts(broke ? "wrote" : "ok");
    return 0;
}
"""
    assert _judged(source) == ["AC"]
    files = r"""
int main(void) {
    FILE *f = fopen("scratch.txt", "w");
    if (!f) return 1;
    fputs("ok\n", f);
    fclose(f);
    char line[8] = "";
    f = fopen("scratch.txt", "r");
    fgets(line, sizeof line, f);
    fputs(line, stdout);
    return 0;
}
"""
    assert _judged(files) == ["RE"]
    assert _judged(files, writable=True) == ["AC"]


def test_a_program_cannot_claim_the_judges_start_up_error():
    """A program that prints the server's own complaint and exits 127 has failed (RE), not the judge; a program
    that really cannot start is a judge error, said on a pipe the program never holds."""
    forged = r"""
int main(void) {
    fputs("jail: cannot start ./main: [Errno 2] No such file or directory\n", stderr);
    return 127;
}
"""
    assert _judged(forged) == ["RE"]
    cannot = dataclasses.replace(LANGUAGES["c"], run=("./absent",))
    report = judge(Program(cannot, HEAD + "int main(void) { puts(\"ok\"); }\n"), Problem((Case("", "ok\n"),)),
                   deadline=time.monotonic() + 120)
    assert report.verdicts == ["JE"], report
    assert _judged(_honest()) == ["AC"]


def test_a_memory_bound_that_cannot_be_lowered_names_what_is_held():
    """The sandbox layer's own part of class 2: lowering a cgroup's bound below what it holds and cannot reclaim
    (tmpfs pages, no swap) fails after a reclaim with an error naming what is held, which the judge reports after
    trying a fresh sandbox; once it is freed, the bound is set."""
    cgroup = Cgroup.create()
    if cgroup is None:
        pytest.skip("no cgroup can be made here")
    path = f"/dev/shm/grpo-h36-{uuid.uuid4().hex}"
    hold = ("import sys\nwith open(sys.argv[1], 'wb') as f:\n    f.write(b'x' * (96 << 20))\n"
            "print('held', flush=True)\nsys.stdin.read()\n")
    try:
        cgroup.limit(512 * MIB, 64)
        proc = subprocess.Popen([sys.executable, "-c", hold, path], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                text=True, preexec_fn=cgroup.join)
        assert proc.stdout is not None and proc.stdout.readline() == "held\n"
        with pytest.raises(OSError, match=r"cannot lower the sandbox's memory bound to 32 MiB: it holds \d+ MiB"):
            cgroup.limit(32 * MIB, 64)
        proc.communicate("")
        os.unlink(path)
        cgroup.limit(32 * MIB, 64)
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(path)
        cgroup.kill()
        cgroup.close()
