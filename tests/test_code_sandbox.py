"""The code sandbox's attack suite: every class of escape and forgery, as root and as an unprivileged user.

Each attack is a list of programs run one after another in one warm
sandbox by a driver process (the sandbox exactly as the ``code`` reward
uses it: :class:`Sandbox` and the test plans of :mod:`shapes`), either as
the invoking user (root in CI) or as a user created for the suite.  What is
checked is what an attacker would want, from outside the sandbox: files in
host folders and in the user's home, connections to listeners (TCP on
127.0.0.1, pathname unix sockets inside a folder every sandbox binds, an
abstract socket), keys in any kernel keyring (``/proc/key-users``), host
memory and kernel slab while it runs, processes, work folders and cgroups
left behind; and, for the forgery classes, that no forged program passes
while an honest one on the same tests does.  Each attack is bounded in time.
"""

from __future__ import annotations

import fnmatch
import json
import os
import platform
import pwd
import random
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path

import pytest

from reward_plugins.code.sandbox import SHM_INODES, WORK_INODES, isolation
from reward_plugins.sandbox.bwrap import HOST_UID_BASE, HOST_UID_SPAN

ROOT = Path(__file__).resolve().parent.parent
RUNNER_DIR = ROOT / "reward_plugins" / "code"
MARKER = f"grpo-code-escape-{uuid.uuid4().hex[:12]}"
SECRET = random.randrange(10**8, 10**9)  # the expected value of the forgery tests: no program can guess it
USER = f"grpo-sbx-{os.getpid()}"  # this run's own: two suites on one machine must not share (or delete) one user
PIDS = Path("/nonexistent")  # the suite folder's pids/, set by the suite_dir fixture
HOST_DIRS = ["/etc", "/tmp", "/var/tmp", "/dev/shm", "/root", "/", str(ROOT), str(RUNNER_DIR)]
SYSCALLS = {"x86_64": {"add_key": 248, "request_key": 249, "keyctl": 250, "clone": 56},
            "aarch64": {"add_key": 217, "request_key": 218, "keyctl": 219, "clone": 220}}[platform.machine()]

pytestmark = [
    pytest.mark.skipif(not isolation().isolated,
                       reason=f"no bubblewrap sandbox here ({isolation().reason}): hostile code is not run"),
    pytest.mark.slow,  # the attack suite: left out of the fast lane (-m "not slow"), run by CI as root and unprivileged
]

# The driver: runs an attack's programs in one sandbox and prints what became of each, as JSON.
DRIVER = r"""
import json, os, sys
open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "pids", str(os.getpid())), "w").write(str(os.getpid()))
sys.path[:0] = sys.argv[1].split(":")
from reward_plugins.code import shapes
from reward_plugins.code.sandbox import Limits, Sandbox

steps = json.loads(sys.stdin.read())
out = []
owner = None
if os.environ.get("DRIVER_FORK"):  # the scoring process and its worker: the worker's sandbox watches its parent
    owner = os.getpid()
    if os.fork():
        os.wait()
        sys.exit(0)
    open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "pids", str(os.getpid())), "w").write(str(os.getpid()))
with Sandbox(owner=owner) as sandbox:
    for step in steps:
        runs = [{}]
        if "calls" in step:  # literal-call tests, planned exactly as the reward plans them
            runs[0]["calls"] = shapes.plan(step["calls"])
            assert isinstance(runs[0]["calls"], shapes.Calls), step["calls"]
        elif "tests" in step:  # assert scripts, planned and run as the reward does: one run per case
            planned = shapes.plan(step["tests"])  # ("assert True", which names nothing of the program's: as it is)
            runs = ([{"tests": case, "names": planned.names} for case in planned.cases]
                    if isinstance(planned, shapes.Scripts) else [{"tests": step["tests"]}])
        else:
            runs[0]["stdin"] = step.get("stdin", "")
        print("running", flush=True, file=sys.stderr)
        done = [sandbox.run(step["code"], limits=Limits(**step.get("limits", {"timeout": 3.0})), **kw) for kw in runs]
        r = done[-1]
        out.append({"status": r.status, "exit_code": r.exit_code, "stdout": "".join(d.stdout for d in done),
                    "stderr": "".join(d.stderr for d in done), "passed_asserts": all(d.passed_asserts for d in done),
                    "cases": list(r.cases) if "calls" in step else [d.passed_asserts for d in done],
                    "mode": sandbox.mode, "cgroup": sandbox.cgroup is not None, "starts": sandbox.starts,
                    "cpu": sum(d.cpu_seconds for d in done), "backstop": r.backstop})
# Outside the sandbox, in the invoking user's own session: no key with the marker in its user or session keyring.
import ctypes, platform
libc = ctypes.CDLL(None, use_errno=True)
keyctl = {"x86_64": 250, "aarch64": 219}[platform.machine()]
searches = []
for keyring in (-4, -3):  # KEY_SPEC_USER_KEYRING, KEY_SPEC_SESSION_KEYRING
    found = libc.syscall(keyctl, 10, keyring, b"user", sys.argv[2].encode(), 0)  # KEYCTL_SEARCH
    searches.append(ctypes.get_errno() if found < 0 else found)
out.append({"key_searches": searches})
print(json.dumps(out))
"""  # noqa: E501  (the driver's source, a raw string: its one long line cannot be wrapped without changing it)

# Tries to leave a file with the marker in every host directory (and the user's home); many programs start so.
PRELUDE = f"""
import os
for _d in {HOST_DIRS!r} + [os.path.expanduser('~'), '/home/{USER}']:
    try:
        with open(os.path.join(_d, {MARKER!r}), "w") as _f:
            _f.write("escaped")
    except OSError:
        pass
"""


# ---------------------------------------------------------------- who runs the driver


class Runner:
    """Runs the driver as the invoking user or as the suite's unprivileged user."""

    def __init__(self, who: str, workdir: Path) -> None:
        self.who, self.workdir = who, workdir
        self.driver = workdir / "driver.py"
        if who == "invoker":
            self.python, self.path = sys.executable, str(ROOT)
        else:
            self.python, self.path = "/usr/bin/python3", f"{ROOT}:{workdir / 'lib'}"
        self.last_pid: int | None = None

    def start(self, steps: list[dict], env: dict[str, str] | None = None) -> subprocess.Popen:
        argv = [self.python, "-I", str(self.driver), self.path, MARKER]
        if self.who != "invoker":
            argv = [shutil.which("runuser"), "-u", USER, "--", *argv]
        environment = {"PATH": "/usr/bin:/bin", **(env or {})}
        proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True, env=environment, cwd=self.workdir)
        proc.stdin.write(json.dumps(steps))
        proc.stdin.close()
        proc.stdin = None  # written whole: communicate() has nothing left to send
        self.last_pid = proc.pid
        return proc

    def run(self, steps: list[dict], env: dict[str, str] | None = None, timeout: float = 90) -> list[dict]:
        return self.finish(self.start(steps, env), timeout)

    def finish(self, proc: subprocess.Popen, timeout: float = 90) -> list[dict]:
        """The results of a started driver, once it ends."""
        out, err = proc.communicate(timeout=timeout)
        assert proc.returncode == 0, err[-3000:]
        *results, keys = json.loads(out.splitlines()[-1])
        assert keys["key_searches"] == [126, 126], keys  # ENOKEY in both keyrings: nothing was stored
        return results


@pytest.fixture(scope="module")
def suite_dir():
    """A folder both users can read: the driver and a copy of the installed pyseccomp module."""
    import pyseccomp

    path = Path(tempfile.mkdtemp(prefix="grpo-sandbox-suite-"))
    (path / "lib").mkdir()
    (path / "pids").mkdir()
    (path / "pids").chmod(0o1777)  # both users' drivers note their pids here
    global PIDS
    PIDS = path / "pids"
    shutil.copy(pyseccomp.__file__, path / "lib" / "pyseccomp.py")
    (path / "driver.py").write_text(DRIVER)
    for p in (path, path / "lib"):
        p.chmod(0o755)
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture(scope="module")
def unprivileged_user():
    """The suite's own unprivileged user, with a home holding secrets, removed at the end."""
    if os.geteuid() != 0:
        pytest.skip("creating the unprivileged test user needs root (this run is already unprivileged)")
    if shutil.which("useradd") is None or shutil.which("runuser") is None:
        pytest.skip("useradd/runuser are not installed: cannot create the unprivileged test user")
    for stale in pwd.getpwall():  # left by a run that was killed: its pid is gone
        pid = stale.pw_name.removeprefix("grpo-sbx-")
        if stale.pw_name.startswith("grpo-sbx-") and pid.isdigit() and not Path(f"/proc/{pid}").exists():
            subprocess.run(["userdel", "-r", stale.pw_name], capture_output=True)
    made = subprocess.run(["useradd", "-m", "-s", "/bin/sh", USER], capture_output=True, text=True)
    if made.returncode != 0:
        pytest.skip(f"cannot create the unprivileged test user: {made.stderr.strip()}")
    entry = pwd.getpwnam(USER)
    for relative in (".ssh/id_ed25519", ".cache/huggingface/token"):
        secret = Path(entry.pw_dir) / relative
        secret.parent.mkdir(parents=True, exist_ok=True)
        secret.write_text(MARKER)
        for p in (secret, secret.parent, secret.parent.parent):
            if p != Path(entry.pw_dir):
                os.chown(p, entry.pw_uid, entry.pw_gid)
    probe = subprocess.run(["runuser", "-u", USER, "--", "/usr/bin/python3", "-c", "print(1)"],
                           capture_output=True, text=True)
    if probe.returncode != 0:
        pytest.skip(f"the unprivileged test user cannot run /usr/bin/python3: {probe.stderr.strip()}")
    yield entry
    subprocess.run(["pkill", "-KILL", "-u", USER], capture_output=True)
    subprocess.run(["userdel", "-r", USER], capture_output=True)


@pytest.fixture(scope="module", params=["invoker", pytest.param("unprivileged", marks=pytest.mark.slow)])
def runner(request, suite_dir):
    if request.param == "unprivileged":
        request.getfixturevalue("unprivileged_user")
    return Runner(request.param, suite_dir)


@pytest.fixture(scope="module")
def root_secret():
    """A secret in the invoking user's own home, which no sandbox may read."""
    path = Path.home() / f".{MARKER}-token"
    path.write_text(MARKER)
    yield path
    path.unlink(missing_ok=True)


# ---------------------------------------------------------------- checks from outside


def meminfo() -> dict[str, int]:
    return {k: int(v.split()[0]) << 10 for k, v in (line.split(":") for line in Path("/proc/meminfo").read_text()
                                                   .splitlines())}


class MemoryWatch:
    """Samples host memory while an attack runs: the largest drop in MemAvailable and rise in Slab."""

    def __init__(self) -> None:
        start = meminfo()
        self.available, self.slab = start["MemAvailable"], start["Slab"]
        self.drop = self.slab_rise = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._thread.start()

    def _sample(self) -> None:
        while not self._stop.wait(0.02):
            now = meminfo()
            self.drop = max(self.drop, self.available - now["MemAvailable"])
            self.slab_rise = max(self.slab_rise, now["Slab"] - self.slab)

    def stop(self) -> MemoryWatch:
        self._stop.set()
        self._thread.join()
        return self


class ProgramsMemory:
    """Samples the summed proportional resident size (``Pss``, so pages forked children share count once) of the
    processes of one driver's sandbox programs (the uids ``HOST_UID_BASE + pid * 64 + n`` of
    :func:`reward_plugins.sandbox.bwrap`): the program's own memory, which other tests' processes do not move."""

    def __init__(self, driver: int) -> None:
        self.first = HOST_UID_BASE + driver * 64 % HOST_UID_SPAN
        self.peak = self.samples = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._thread.start()

    def _sample(self) -> None:
        while not self._stop.wait(0.02):
            total, seen = 0, False
            for name in filter(str.isdigit, os.listdir("/proc")):
                try:
                    if not 0 <= os.stat(f"/proc/{name}").st_uid - self.first < 64:
                        continue
                    rollup = Path(f"/proc/{name}/smaps_rollup").read_text()
                except OSError:
                    continue
                seen = True
                total += sum(int(line.split()[1]) << 10 for line in rollup.splitlines() if line.startswith("Pss:"))
            self.samples += seen
            self.peak = max(self.peak, total)

    def stop(self) -> ProgramsMemory:
        self._stop.set()
        self._thread.join()
        return self


def key_counts() -> dict[str, int]:
    """Keys per uid in every kernel keyring (``/proc/key-users``, world-readable)."""
    out = {}
    for line in Path("/proc/key-users").read_text().splitlines():
        uid, rest = line.split(":", 1)
        out[uid.strip()] = int(rest.split()[1].split("/")[0])
    return out


def marked_processes() -> list[int]:
    found = []
    for name in filter(str.isdigit, os.listdir("/proc")):
        try:
            if MARKER.encode() in Path(f"/proc/{name}/cmdline").read_bytes():
                found.append(int(name))
        except OSError:
            pass
    return found


def driver_pids() -> set[int]:
    """Every process that ran this suite's driver (each notes its pid): what the outside checks are about, so
    that another user's sandboxes on a shared machine are not taken for this suite's."""
    return {int(line) for path in PIDS.glob("*") for line in path.read_text().split()}


def sandbox_uid_processes() -> list[int]:
    """Processes of a programs' uid of a sandbox this suite's drivers made (``HOST_UID_BASE + pid * 64 + n``)."""
    ranges = [(HOST_UID_BASE + pid * 64 % HOST_UID_SPAN, 64) for pid in driver_pids()]
    found = []
    for name in filter(str.isdigit, os.listdir("/proc")):
        try:
            uid = os.stat(f"/proc/{name}").st_uid
        except OSError:
            continue
        if any(0 <= uid - start < span for start, span in ranges):
            found.append(int(name))
    return found


def leftover_folders(pid: int | None = None) -> list[str]:
    """Work folders and cgroups of the sandbox code (of one owner pid when given)."""
    pattern = f"grpo-host-code-{pid}-*" if pid else "grpo-host-code-*"
    found = [str(p) for p in Path(tempfile.gettempdir()).glob(pattern)]
    for hierarchy in ("memory", "pids"):
        # os.walk, not rglob: another run's sandbox (an xdist worker's) removes its cgroups while this walks
        for folder, children, _ in os.walk(Path("/sys/fs/cgroup") / hierarchy):
            found += [os.path.join(folder, c) for c in children if fnmatch.fnmatch(c, pattern)]
    return found


def eventually(check, seconds: float = 5.0):
    """Kills are asynchronous: poll ``check()`` until it is falsy (returns the last value)."""
    deadline = time.monotonic() + seconds
    while (value := check()) and time.monotonic() < deadline:
        time.sleep(0.05)
    return value


class Listeners:
    """A TCP listener on 127.0.0.1, a pathname unix socket in a folder every sandbox binds, one in the host's
    /tmp, and an abstract one: no sandboxed program may connect to any of them."""

    def __init__(self) -> None:
        self.tcp = socket.socket()
        self.tcp.bind(("127.0.0.1", 0))
        self.port = self.tcp.getsockname()[1]
        self.paths = [str(RUNNER_DIR / f".{MARKER}.sock"), f"/tmp/{MARKER}.sock"]
        self.sockets = [self.tcp]
        for path in self.paths:
            s = socket.socket(socket.AF_UNIX)
            s.bind(path)
            os.chmod(path, 0o777)
            self.sockets.append(s)
        self.abstract = f"\0{MARKER}"
        s = socket.socket(socket.AF_UNIX)
        s.bind(self.abstract)
        self.sockets.append(s)
        for s in self.sockets:
            s.listen(8)
            s.setblocking(False)
        # datagram sockets planted in folders every sandbox binds (the runner's, the Python installation's)
        self.datagram_paths = [str(RUNNER_DIR / f".{MARKER}.dgram"), os.path.join(sys.prefix, f".{MARKER}.dgram")]
        self.datagrams = []
        for path in self.datagram_paths:
            s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
            s.bind(path)
            os.chmod(path, 0o777)
            s.setblocking(False)
            self.datagrams.append(s)

    def connections(self) -> int:
        count = 0
        for s in self.sockets:
            try:
                s.accept()[0].close()
                count += 1
            except BlockingIOError:
                pass
        for s in self.datagrams:
            try:
                s.recv(1 << 16)
                count += 1
            except BlockingIOError:
                pass
        return count

    def close(self) -> None:
        for s in self.sockets + self.datagrams:
            s.close()
        for path in self.paths + self.datagram_paths:
            Path(path).unlink(missing_ok=True)


@pytest.fixture
def outside(root_secret):
    """Snapshot, then check after the attack: host files, listeners, keyrings, processes, folders."""
    listeners = Listeners()
    keys = key_counts()
    yield listeners
    try:
        assert listeners.connections() == 0, "a sandboxed program reached a listener"
    finally:
        listeners.close()
    # runuser's PAM session gives a test user one new session keyring per driver run: not the sandbox's. Every
    # xdist worker (and every suite on the machine) has its own test user, USER's prefix, whose drivers run at the
    # same time as this test, so none of them is counted.
    test_users = {str(e.pw_uid) for e in pwd.getpwall() if e.pw_name.startswith(USER.rsplit("-", 1)[0] + "-")}
    grown = {uid: n for uid, n in key_counts().items() if n > keys.get(uid, 0) and uid not in test_users}
    assert not grown, f"keys were added to kernel keyrings: {grown}"
    assert eventually(marked_processes) == [], "a process with the program's marker survived"
    assert eventually(sandbox_uid_processes) == [], "a process of a sandbox's programs' uid survived"
    home = Path(f"/home/{USER}")
    for directory in [*HOST_DIRS, str(Path.home()), str(home)]:
        assert not os.path.exists(os.path.join(directory, MARKER)), f"a program wrote into {directory}"
    assert eventually(lambda: [f for pid in driver_pids() for f in leftover_folders(pid)]) == [], \
        "a work folder or cgroup was left behind"


# ---------------------------------------------------------------- escapes


def program(body: str) -> dict:
    return {"code": PRELUDE + body, "tests": "assert True"}


ESCAPES = {
    # processes and resources
    "fork_bomb": "while True:\n    os.fork()",
    "posix_spawn_sleepers": (
        "import sys\nwhile True:\n"
        f"    os.posix_spawn(sys.executable, [sys.executable, '-c', 'import time; time.sleep(10**6)', {MARKER!r}],"
        " dict(os.environ))"
    ),
    "ctypes_fork": "import ctypes, time\nlibc = ctypes.CDLL(None)\nwhile True:\n"
                   "    libc.fork() < 0 and time.sleep(10**6)",
    "busy_loop": "while True:\n    pass",
    "allocate_50gb": "block = bytearray(50 * 1024**3)\nblock[-1] = 1",
    "kill_parent": "os.kill(os.getppid(), 9)",
    "kill_everything": "os.kill(-1, 9)\nraise SystemExit(1)",
    "setsid_grandchild": (
        "import sys, time\n"
        "if os.fork() == 0:\n    os.setsid()\n    if os.fork() == 0:\n"
        f"        os.execv(sys.executable, [sys.executable, '-c', 'import time; time.sleep(10**6)', {MARKER!r}])\n"
        "    os._exit(0)\ntime.sleep(10**6)"
    ),
    "print_1gb": "import sys\nchunk = 'x' * (1 << 20)\nfor _ in range(1024):\n    sys.stdout.write(chunk)",
}


@pytest.mark.timeout(120)
@pytest.mark.parametrize("name", sorted(ESCAPES))
def test_hostile_program_fails_and_leaves_nothing(runner, outside, name):
    honest = {"code": "import os\nassert os.listdir('.') == [], os.listdir('.')", "tests": "assert True"}
    results = runner.run([program(ESCAPES[name]), honest])
    assert not results[0]["passed_asserts"]
    assert results[1]["passed_asserts"], results[1]  # the sandbox (or its replacement) still works, empty


KEYRINGS = """
import ctypes, errno, os
libc = ctypes.CDLL(None, use_errno=True)
NR = {nr}
def call(name, *args):
    r = libc.syscall(NR[name], *args)
    return r, ctypes.get_errno()
print("add_user", *call("add_key", b"user", {marker!r}.encode(), b"secret", 6, -4))  # KEY_SPEC_USER_KEYRING
print("add_session", *call("add_key", b"user", {marker!r}.encode(), b"secret", 6, -3))
print("session_id", *call("keyctl", 0, -3, 0))  # KEYCTL_GET_KEYRING_ID @s
print("search", *call("keyctl", 10, -4, b"user", {marker!r}.encode(), 0))  # KEYCTL_SEARCH @u
print("request", *call("request_key", b"user", {marker!r}.encode(), None, 0))
for listing in ("/proc/keys", "/proc/key-users"):
    try:
        print(listing, len(open(listing).read()), 0)
    except OSError as exc:
        print(listing, -1, exc.errno)
"""


@pytest.mark.timeout(120)
def test_no_kernel_keyring_is_reachable(runner, outside):
    """Keyrings are per user, not per namespace: every keyring syscall fails, for this program and the next."""
    code = KEYRINGS.format(nr=SYSCALLS, marker=MARKER)
    results = runner.run([{"code": code}, {"code": code}])
    for result in results:
        lines = dict(line.split(" ", 1) for line in result["stdout"].splitlines())
        assert set(lines) == {"add_user", "add_session", "session_id", "search", "request", "/proc/keys",
                              "/proc/key-users"}, result
        for name, outcome in lines.items():
            if name.startswith("/proc"):  # the listings of every keyring's keys are not readable
                assert outcome.split()[0] == "-1", (name, outcome)
            else:
                assert outcome.split() == ["-1", "1"], (name, outcome)  # EPERM, nothing created or found


NAMESPACES = """
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
def report(name, r):
    print(name, r, ctypes.get_errno(), flush=True)
report("unshare_user_mount", libc.unshare(0x10000000 | 0x00020000))
report("unshare_net", libc.unshare(0x40000000))
report("clone_newuser", libc.syscall({clone}, 0x10000000 | 17, 0, 0, 0, 0))
os.mkdir("mnt")
report("mount_tmpfs", libc.mount(b"none", b"mnt", b"tmpfs", 0, b"size=4g"))
fd = os.open("/proc/self/ns/user", os.O_RDONLY)
report("setns", libc.setns(fd, 0))
if libc.mount(b"none", b"mnt", b"tmpfs", 0, b"size=4g") == 0:  # had it worked: fill memory nothing counts
    with open("mnt/fill", "wb") as f:
        for _ in range(1536):
            f.write(b"x" * (1 << 20))
"""


@pytest.mark.timeout(120)
def test_no_nested_namespaces_or_mounts(runner, outside):
    watch = MemoryWatch()
    (result,) = runner.run([{"code": NAMESPACES.format(clone=SYSCALLS["clone"]),
                             "limits": {"timeout": 10.0, "memory": 256 << 20}}])
    watch.stop()
    lines = dict(line.split(" ", 1) for line in result["stdout"].splitlines())
    assert set(lines) == {"unshare_user_mount", "unshare_net", "clone_newuser", "mount_tmpfs", "setns"}, result
    for name, outcome in lines.items():
        assert outcome.split()[0] == "-1", (name, outcome)
    assert watch.drop < 1 << 30, f"host memory fell by {watch.drop >> 20} MiB"


SOCKETS = """
import socket
def attempt(name, family, address):
    try:
        s = socket.socket(family)
        s.settimeout(1)
        s.connect(address)
        s.sendall(b"{marker}")
        print(name, "connected")
    except OSError as exc:
        print(name, "refused", exc.errno)
for i, path in enumerate({paths!r}):
    attempt(f"unix{{i}}", socket.AF_UNIX, path)
attempt("abstract", socket.AF_UNIX, {abstract!r})
attempt("tcp", socket.AF_INET, ("127.0.0.1", {port}))
for family in (socket.AF_NETLINK, socket.AF_PACKET):
    try:
        socket.socket(family, socket.SOCK_RAW)
        print(family, "created")
    except OSError as exc:
        print(int(family), "refused", exc.errno)
"""


DATAGRAMS = """
import socket
def attempt(name, make, path):
    try:
        s = make()
        s.sendto(b"{marker}", path)
        print(name, "sent")
    except OSError as exc:
        print(name, "refused", exc.errno)
for i, path in enumerate({paths!r}):
    attempt(f"dgram{{i}}", lambda: socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM), path)
    attempt(f"dgram_pair{{i}}", lambda: socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)[0], path)
    attempt(f"seqpacket_pair{{i}}", lambda: socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)[0], path)
    attempt(f"stream_pair{{i}}", lambda: socket.socketpair()[0], path)
for family in (socket.AF_INET, socket.AF_INET6):
    try:
        s = socket.socket(family)
        s.bind(("::1" if family == socket.AF_INET6 else "127.0.0.1", 0))
        s.listen()
        print(int(family), "loopback listener")
    except OSError as exc:
        print(int(family), "refused", exc.errno)
import asyncio, multiprocessing
r, w = multiprocessing.Pipe()
w.send(asyncio.run(asyncio.sleep(0, "ok")))
print("pipe", r.recv())
"""


@pytest.mark.timeout(120)
def test_no_datagram_reaches_a_bound_socket_and_no_loopback_tcp(runner, outside):
    """A datagram socket (or a datagram socketpair) could sendto any socket file under a bound folder: none can be
    made; a stream socketpair (asyncio, multiprocessing) works and cannot be pointed at a path; and no TCP at all,
    not even on the sandbox's own loopback (its buffers are memory a cgroup v1 bound does not count)."""
    code = DATAGRAMS.format(marker=MARKER, paths=outside.datagram_paths)
    (result,) = runner.run([{"code": code}])
    lines = result["stdout"].splitlines()
    assert len(lines) == 11 and lines[-1] == "pipe ok", result
    assert all(" refused " in line for line in lines[:-1]), lines


@pytest.mark.timeout(120)
def test_no_socket_outside_the_sandbox_is_reachable(runner, outside):
    """Not the listener on 127.0.0.1, not a socket file in a folder the sandbox binds, not an abstract one."""
    listeners = outside
    code = SOCKETS.format(marker=MARKER, paths=listeners.paths, abstract=listeners.abstract, port=listeners.port)
    (result,) = runner.run([{"code": code}])
    lines = result["stdout"].splitlines()
    assert len(lines) == 6, result
    assert all(" refused " in line for line in lines), lines


SNOOP = """
import os
found = []
for key, value in os.environ.items():
    if {marker!r} in value:
        found.append("environ " + key)
for pid in filter(str.isdigit, os.listdir("/proc")):
    for part in ("environ", "cmdline"):
        try:
            if {marker!r}.encode() in open(f"/proc/{{pid}}/{{part}}", "rb").read():
                found.append(f"/proc/{{pid}}/{{part}}")
        except OSError:
            pass
for path in {paths!r}:
    try:
        if {marker!r} in open(os.path.expanduser(path)).read():
            found.append(path)
    except OSError:
        pass
print("FOUND", found)
print("EXISTS", [p for p in ("/home", "/run", "/var/run/docker.sock", "/etc/passwd", "/etc/shadow", "/sys",
                             "/root/.ssh") if os.path.exists(p)])
print("ENV", sorted(os.environ))
"""


@pytest.mark.timeout(120)
def test_no_host_environment_or_home_is_visible(runner, outside, root_secret):
    """The host's environment (HF_TOKEN, WANDB_API_KEY) is nowhere in the sandbox, not even in /proc/1/environ;
    home folders, /run, /etc and /sys are not there at all."""
    paths = [str(root_secret), f"/home/{USER}/.ssh/id_ed25519", f"/home/{USER}/.cache/huggingface/token",
             "~/.cache/huggingface/token"]
    env = {"HF_TOKEN": MARKER, "WANDB_API_KEY": MARKER, "HOME": str(Path.home())}
    (result,) = runner.run([{"code": SNOOP.format(marker=MARKER, paths=paths)}], env=env)
    out = dict(line.split(" ", 1) for line in result["stdout"].splitlines())
    assert out["FOUND"] == "[]", result["stdout"]
    assert out["EXISTS"] == "[]", result["stdout"]
    assert set(eval(out["ENV"])) <= {"PATH", "HOME", "PWD", "LANG", "PYTHONDONTWRITEBYTECODE", "PYTHONIOENCODING",
                                      "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "TMPDIR"}


SPREAD = """
import os, time
kids = []
for _ in range(15):
    pid = os.fork()
    if pid == 0:
        try:
            block = bytearray(200 << 20)
            for i in range(0, len(block), 4096):
                block[i] = 1
        except MemoryError:
            os._exit(1)
        time.sleep(5)
        os._exit(0)
    kids.append(pid)
time.sleep(4)
"""


@pytest.mark.timeout(120)
def test_memory_is_bounded_across_all_of_a_programs_processes(runner, outside):
    """15 children x 200 MB against memory_mb=256: a cgroup holds the total near 256 MB; without one
    (an unprivileged user with no delegated cgroup v2) the documented bound is per process x processes.

    With a cgroup, what is measured is the program's own processes (the proportional resident size of every
    process of its sandbox's uids), not the host's free memory, which the other tests running beside this one
    move by hundreds of MiB."""
    proc = runner.start([{"code": SPREAD, "limits": {"timeout": 8.0, "memory": 256 << 20, "processes": 16}}])
    programs, watch = ProgramsMemory(proc.pid), MemoryWatch()
    (result,) = runner.finish(proc)
    programs.stop(), watch.stop()
    if result["cgroup"]:
        assert programs.samples > 10, "no process of the program's uids was seen"
        assert programs.peak < 400 << 20, f"the program's processes held {programs.peak >> 20} MiB at once " \
                                          f"with a cgroup bound of 320 MiB"
    else:
        assert watch.drop < (16 * 256 + 512) << 20, f"host memory fell by {watch.drop >> 20} MiB"


INODES = """
import os, time
counts = {}
for folder in (".", "/dev/shm", "/tmp"):
    n, end = 0, time.monotonic() + 1.5
    try:
        while time.monotonic() < end:
            open(os.path.join(folder, f"f{n}"), "w").close()
            n += 1
    except OSError:
        pass
    counts[folder] = n
print(counts)
"""


@pytest.mark.timeout(120)
def test_files_are_capped_by_inodes_not_only_bytes(runner, outside):
    """Creating empty files costs the kernel slab, not tmpfs bytes: the work folder and /dev/shm cap inodes."""
    watch = MemoryWatch()
    (result,) = runner.run([{"code": INODES, "limits": {"timeout": 10.0}}])
    watch.stop()
    counts = eval(result["stdout"])
    assert counts["."] < WORK_INODES and counts["/dev/shm"] < SHM_INODES and counts["/tmp"] == 0, counts
    assert watch.slab_rise < 128 << 20, f"kernel slab grew by {watch.slab_rise >> 20} MiB"


# ---------------------------------------------------------------- forgery

MBPP = f"assert secret(3) == {SECRET}\nassert secret(4) == {SECRET + 1}\n"
HUMANEVAL = (f"METADATA = {{}}\n\ndef check(candidate):\n    assert candidate(3) == {SECRET}\n"
             f"    assert candidate(4) == {SECRET + 1}\n\ncheck(secret)\n")
HONEST = f"def secret(x):\n    return {SECRET} + x - 3\n"

FORGERIES = {
    "rebind_exec": "import builtins\nbuiltins.exec = lambda *a, **k: None\nbuiltins.compile = lambda *a, **k: None\n"
                   "def secret(x):\n    return 0",
    "equal_to_everything": "class A:\n    __eq__ = lambda s, o: True\n    __hash__ = lambda s: 0\n"
                           "    __bool__ = lambda s: True\ndef secret(x):\n    return A()",
    "int_subclass": "class I(int):\n    __eq__ = lambda s, o: True\n    __hash__ = int.__hash__\n"
                    "def secret(x):\n    return I(0)",
    "list_subclass": "class L(list):\n    __eq__ = lambda s, o: True\ndef secret(x):\n    return L()",
    "frames_and_gc": (  # every int, string and bytes reachable from frames or the garbage collector
        "import gc, re, sys\nseen = []\nf = sys._getframe()\nwhile f:\n    seen += list(f.f_locals.values())"
        " + list(f.f_globals.values())\n    f = f.f_back\nseen += gc.get_objects()\nnumbers = []\n"
        "for o in seen:\n    if isinstance(o, int) and 10**8 <= o < 10**9:\n        numbers.append(o)\n"
        "    elif isinstance(o, (str, bytes)):\n        s = o if isinstance(o, str) else o.decode('latin-1')\n"
        "        numbers += [int(m) for m in re.findall(r'== (\\d{9})', s)]\n"
        "    elif isinstance(o, bytes) and len(o) == 16:\n        os.write(3, o)\n"
        "def secret(x):\n    return numbers[0] + x - 3 if numbers else 0"
    ),
    "memory_scan": (  # the process's whole memory (a fork of the server that served earlier requests)
        "import re\nfound = []\nfor line in open('/proc/self/maps'):\n    parts = line.split()\n"
        "    if 'r' not in parts[1]:\n        continue\n    start, end = (int(x, 16) for x in parts[0].split('-'))\n"
        "    try:\n        with open('/proc/self/mem', 'rb') as mem:\n            mem.seek(start)\n"
        "            found += re.findall(rb'== (\\d{9})', mem.read(end - start))\n    except (OSError, ValueError,"
        " OverflowError):\n        pass\n"
        "def secret(x):\n    return int(found[0]) + x - 3 if found else 0"
    ),
    "write_the_results_itself": "os.write(3, b'=\\n' + b'{\"f\":\"0x1p0\"}\\n' * 4)\nos._exit(0)",
    "exit_before_the_calls": "import sys\nsys.exit(0)",
    "kill_the_judge": (  # same uid in user mode: the judge dies, and its verdict with it
        "import signal\nfor p in filter(str.isdigit, os.listdir('/proc')):\n    try:\n"
        "        if b'runner.py' in open(f'/proc/{p}/cmdline', 'rb').read() and int(p) not in (os.getpid(),"
        " os.getppid()):\n            os.kill(int(p), 9)\n    except OSError:\n        pass\n"
        "def secret(x):\n    return 0"
    ),
}


@pytest.mark.timeout(180)
@pytest.mark.parametrize("shape", ["mbpp", "humaneval"])
def test_literal_call_asserts_cannot_be_forged(runner, outside, shape):
    """An honest program passes; every forgery fails, in the same warm sandbox, right after the honest one."""
    tests = MBPP if shape == "mbpp" else HUMANEVAL
    steps = [{"code": HONEST, "calls": tests}]
    for name in sorted(FORGERIES):
        steps += [{"code": "import os\n" + FORGERIES[name], "calls": tests}, {"code": HONEST, "calls": tests}]
    results = runner.run(steps, timeout=150)
    expected = [True, True] if shape == "mbpp" else [True]
    assert results[0]["cases"] == expected, results[0]
    for i, name in enumerate(sorted(FORGERIES)):
        forged, honest = results[1 + 2 * i], results[2 + 2 * i]
        assert not any(forged["cases"]), (name, forged)
        assert honest["cases"] == expected, (name, honest)  # and the judge still works afterwards


PAIRS = {  # calls whose expected value is another call's argument: an inverse pair, and an involution
    "inverse": ("assert encode('hello') == 'khoor'\nassert decode('khoor') == 'hello'\nassert decode('abc') == 'xyz'\n",
                "def encode(s):\n    return ''.join(chr((ord(c) - 94) % 26 + 97) for c in s)\n"
                "def decode(s):\n    return ''.join(chr((ord(c) - 100) % 26 + 97) for c in s)\n"),
    "involution": ("assert rev('abc') == 'cba'\nassert rev('cba') == 'abc'\nassert rev([1, 2]) == [2, 1]\n"
                   "assert rev([2, 1]) == [1, 2]\n", "def rev(s):\n    return s[::-1]\n"),
}
# Returns another call's argument, found in its frames, in the garbage collector or in its own memory.
ARGUMENT_THIEF = (
    "import gc, sys\ndef _given():\n    found = []\n    f = sys._getframe(1)\n    while f:\n"
    "        for v in list(f.f_locals.values()) + list(f.f_globals.values()):\n"
    "            if isinstance(v, list):\n                found += [a for steps in v if isinstance(steps, list)"
    " for step in steps if isinstance(step, tuple) and len(step) == 3 for a in step[1]]\n        f = f.f_back\n"
    "    return found\n"
    "def _other(s):\n    options = [a for a in _given() if a != s and type(a) is type(s) and len(a) == len(s)]\n"
    "    return options[0] if options else s\n"
    "encode = decode = rev = _other\n"
)


@pytest.mark.timeout(120)
@pytest.mark.parametrize("pair", sorted(PAIRS))
def test_a_call_cannot_answer_with_another_calls_argument(runner, outside, pair):
    """Each function's calls run in a process of their own, and a call whose result repeats a same-function call's
    argument runs again alone: returning what the other call was given passes nothing; the honest program passes."""
    tests, honest = PAIRS[pair]
    results = runner.run([{"code": honest, "calls": tests}, {"code": ARGUMENT_THIEF, "calls": tests},
                          {"code": honest, "calls": tests}])
    cases = tests.count("assert")
    assert results[0]["cases"] == [True] * cases == results[2]["cases"], results
    assert not any(results[1]["cases"]), results[1]


SCAVENGE = (  # every 9-digit number anywhere in the program's memory: a copy of the server's, with its heap
    "import re\nfound = set()\nfor line in open('/proc/self/maps'):\n    parts = line.split()\n"
    "    if 'r' not in parts[1]:\n        continue\n    start, end = (int(x, 16) for x in parts[0].split('-'))\n"
    "    try:\n        with open('/proc/self/mem', 'rb') as mem:\n            mem.seek(start)\n"
    "            found.update(re.findall(rb'(?<!\\d)\\d{9}(?!\\d)', mem.read(end - start)))\n"
    "    except (OSError, ValueError, OverflowError):\n        pass\nprint(sorted(found))\n"
)


@pytest.mark.timeout(120)
def test_a_program_cannot_copy_an_earlier_programs_answer(runner, outside):
    """A sibling completion printed (or returned) the right answer a moment ago in the same sandbox: none of it
    (output, results, tests, code) is anywhere in the next program's memory."""
    honest_io = {"code": f"input()\nprint({SECRET})", "stdin": "3"}
    steps = [honest_io, {"code": HONEST, "calls": MBPP}, {"code": HONEST, "tests": SCRIPT},
             {"code": SCAVENGE, "stdin": "3"}]
    results = runner.run(steps)
    assert results[0]["stdout"] == f"{SECRET}\n" and results[1]["cases"] == [True, True]
    assert results[2]["passed_asserts"]
    scavenged = results[3]
    assert scavenged["status"] == "exited" and scavenged["stdout"].startswith("["), scavenged
    assert str(SECRET) not in scavenged["stdout"] and str(SECRET + 1) not in scavenged["stdout"]


SCRIPT = f"for x, y in [(3, {SECRET})]:\n    assert secret(x) == y\n"

# Script mode: the tests run in a judge process that calls the program's process over a pipe.  Each forgery
# below ran with the tests in the program's own process before, and some of them passed there.
SCRIPT_TESTS = {  # tests of script shape (a loop, a helper, a name as argument), each passed by HONEST
    "loop": SCRIPT,
    "isclose": f"import math\nfor x in [3]:\n    assert math.isclose(secret(x), {SECRET})\n",
    "difference": f"def check(candidate):\n    for x in [3]:\n        assert abs(candidate(x) - {SECRET}) < 1e-6\n"
                  "\ncheck(secret)\n",
    "copied": f"import copy\nx = copy.deepcopy(3)\nassert secret(x) == {SECRET}\n",
    "random": f"import random\nx = random.choice([3])\nassert secret(x) == {SECRET}\n",
    "not_unequal": f"for x in [3]:\n    assert not secret(x) != {SECRET}\n",
}
ANY_FD = (  # every descriptor it has: read what is there, write a token's worth and the harness's markers back
    "import os, time\nfor fd in range(64):\n    try:\n        os.set_blocking(fd, False)\n"
    "        data = os.read(fd, 1 << 16)\n    except OSError:\n        data = b''\n    for out in range(64):\n"
    "        try:\n            os.write(out, data + os.urandom(16) + b'=\\n' + (0).to_bytes(4, 'big'))\n"
    "        except OSError:\n            pass\n"
)
SCRIPT_FORGERIES = {
    "any_inherited_fd": ANY_FD + "def secret(x):\n    return 0",
    "token_from_fd5": (  # the token the tests' pipe began with, written back, and out before the tests (passed once)
        "os.set_blocking(5, False)\ntry:\n    data = os.read(5, 1 << 20)\nexcept OSError:\n    data = b''\n"
        "os.write(3, data[:16])\nos._exit(0)\ndef secret(x):\n    return 0"
    ),
    "frames_and_gc": FORGERIES["frames_and_gc"],
    "memory_scan": FORGERIES["memory_scan"],
    "rebind_exec": FORGERIES["rebind_exec"],
    "patch_the_harness": (  # every function reachable from frames or gc that looks like a harness: made to pass
        "import gc, sys\nf = sys._getframe()\nwhile f:\n    for k in list(f.f_globals):\n"
        "        if callable(f.f_globals[k]) and k in ('serve', 'message', 'referee', 'judge', 'exec'):\n"
        "            f.f_globals[k] = lambda *a, **kw: None\n    f = f.f_back\n"
        "for o in gc.get_objects():\n    if isinstance(o, dict) and 'TOKEN_BYTES' in o:\n"
        "        o['referee'] = lambda *a, **kw: 0\n        o['serve'] = lambda *a, **kw: None\n"
        "sys.modules['__main__'].__dict__['serve'] = lambda *a, **kw: None\n"
        "def secret(x):\n    return 0"
    ),
    "patch_imported_modules": (
        "import builtins, copy, math, random\nmath.isclose = lambda *a, **k: True\nrandom.choice = lambda s: 3\n"
        "copy.deepcopy = lambda x, *a: 3\nbuiltins.abs = lambda x: 0\nbuiltins.AssertionError = type('N', (), {})\n"
        "for name in ('math', 'random', 'copy'):\n    open(name + '.py', 'w').write('def __getattr__(n):\\n"
        "    return lambda *a, **k: True\\n')\ndef secret(x):\n    return 0"
    ),
    "equal_to_everything": FORGERIES["equal_to_everything"],
    "constant_operators": (
        "class A:\n    __eq__ = lambda s, o: True\n    __ne__ = lambda s, o: False\n    __hash__ = lambda s: 0\n"
        "    __bool__ = lambda s: True\n    __sub__ = __rsub__ = lambda s, o: 0\n    __abs__ = lambda s: 0\n"
        "    __float__ = lambda s: 1.0\n    __index__ = lambda s: 3\n    __lt__ = lambda s, o: True\n"
        "def secret(x):\n    return A()"
    ),
    "int_subclass": FORGERIES["int_subclass"],
    "list_subclass": FORGERIES["list_subclass"],
    "print_the_expected": (  # what a harness prints or writes when tests pass, on every channel it has
        "import sys\nfor out in (sys.stdout, sys.stderr):\n"
        "    print('=\\nOK\\nAll tests passed\\n', file=out, flush=True)\n"
        "def secret(x):\n    print('True\\n' * 3, flush=True)\n    os.write(3, b'\\x00\\x00\\x00\\x02{}')\n    return 0"
    ),
    "garbled_answers": "os.write(3, b'\\xff' * 4096)\ndef secret(x):\n    return 0",
    "answer_too_large": "os.write(3, (1 << 31).to_bytes(4, 'big'))\ndef secret(x):\n    return 0",
    "answers_out_of_turn": (  # its own names message (secret: its object #0), then answers numbered ahead of turn
        "import json\ndef _m(body):\n    data = json.dumps(body).encode()\n"
        "    os.write(3, len(data).to_bytes(4, 'big') + data)\n"
        f"_m({{'i': 0, 'names': {{'secret': {{'h': 0}}}}}})\n"
        f"for i in range(1, 4):\n    _m({{'i': i + 1, 'v': {SECRET}}})\n"
        "def secret(x):\n    return 0"
    ),
    "flood_the_pipes": (
        "import threading\ndef _flood(fd):\n    while True:\n        try:\n            os.write(fd, b'\\n' * 65536)\n"
        "        except OSError:\n            return\nfor fd in (1, 3):\n"
        "    threading.Thread(target=_flood, args=(fd,), daemon=True).start()\ndef secret(x):\n    return 0"
    ),
    "never_answer": "def secret(x):\n    import time\n    time.sleep(10**6)",
    "exit_before_the_calls": FORGERIES["exit_before_the_calls"],
    "exit_inside_the_call": "def secret(x):\n    os._exit(0)",
    "kill_the_judge": FORGERIES["kill_the_judge"],
    "stop_the_judge": FORGERIES["kill_the_judge"].replace("os.kill(int(p), 9)", "os.kill(int(p), signal.SIGSTOP)"),
}


@pytest.mark.timeout(900)
def test_script_asserts_cannot_be_forged(runner, outside):
    """Tests of any other shape run in a judge process of their own against the program's process: an honest
    program passes each, and no forgery passes any (all of them in the same warm sandbox, the honest program
    again after each, so the judge still works), within the time bound.  A forgery's timeout is 1 s: the fast
    ones end within 0.3 s, and the ones that never answer are stopped at its backstop, 6 rows each in both modes."""
    steps = [{"code": HONEST, "tests": tests} for _, tests in sorted(SCRIPT_TESTS.items())]
    for name in sorted(SCRIPT_FORGERIES):
        steps += [{"code": "import os\n" + SCRIPT_FORGERIES[name], "tests": tests, "limits": {"timeout": 1.0}}
                  for _, tests in sorted(SCRIPT_TESTS.items())]
        steps.append({"code": HONEST, "tests": SCRIPT})
    results = runner.run(steps, timeout=600)
    n = len(SCRIPT_TESTS)
    assert all(r["passed_asserts"] for r in results[:n]), results[:n]
    for i, name in enumerate(sorted(SCRIPT_FORGERIES)):
        forged, honest = results[n + i * (n + 1):n + i * (n + 1) + n], results[n + i * (n + 1) + n]
        assert not any(r["passed_asserts"] for r in forged), (name, [(r["status"], r["stderr"][-300:]) for r in forged])
        assert honest["passed_asserts"], (name, honest)
    for r in results:
        assert str(SECRET + 1) not in r["stdout"] + r["stderr"]  # nothing of a sibling's or the tests' leaked out



def test_two_objects_of_the_program_never_share_a_type_in_the_judge(runner):
    """type() of an object of the program's is a proxy class of that object's own (the red team's F6): with one
    proxy class for all, ``type(clone(x)) is type(x)`` passed for an object of an unrelated class."""
    program = "class A:\n    pass\nclass B:\n    pass\ndef make():\n    return A()\ndef clone(x):\n    return B()\n"
    results = runner.run([
        {"code": program, "tests": "x = make()\nassert type(clone(x)) is type(x) and clone(x) is not x\n"},
        {"code": program, "tests": "x = make()\nassert type(x) is type(x) and clone(x) is not x\n"},
    ], timeout=60)
    assert not results[0]["passed_asserts"], results[0]
    assert results[1]["passed_asserts"], results[1]  # one object's type is its own

JUDGE_PROBE = (  # everything it might reach of another process of the sandbox (the judge, the server): tried
    "import ctypes, sys\nlibc = ctypes.CDLL(None, use_errno=True)\nreached = []\n"
    "NR = {'x86_64': (101, 310, 434, 438), 'aarch64': (117, 270, 434, 438)}[__import__('platform').machine()]\n"
    "for p in filter(str.isdigit, os.listdir('/proc')):\n    pid = int(p)\n"
    "    if pid in (os.getpid(), 1):  # the sandbox's init is bwrap's, not the judge\n        continue\n"
    "    for name in ('mem', 'environ', 'maps', 'fd', 'fdinfo/3', 'fd/3', 'fd/4'):\n        try:\n"
    "            path = f'/proc/{pid}/{name}'\n"
    "            data = os.listdir(path) if name == 'fd' else open(path, 'rb').read(1 << 20)\n"
    "            reached.append((pid, name))\n"
    "            if name == 'fd/4':\n                os.write(2, b'TESTS:' + data)\n"
    "        except OSError:\n            pass\n"
    "    buf = ctypes.create_string_buffer(64)\n"
    "    iov = (ctypes.c_void_p * 2)(ctypes.addressof(buf), 64)\n"
    "    if libc.syscall(NR[0], 16, pid, 0, 0) == 0:  # PTRACE_ATTACH\n        reached.append((pid, 'ptrace'))\n"
    "    if libc.syscall(NR[1], pid, iov, 1, iov, 1, 0) > 0:  # process_vm_readv\n"
    "        reached.append((pid, 'process_vm_readv'))\n"
    "    pidfd = libc.syscall(NR[2], pid, 0)  # pidfd_open\n"
    "    if pidfd >= 0:\n        for target in range(3, 10):\n"
    "            if libc.syscall(NR[3], pidfd, target, 0) >= 0:  # pidfd_getfd\n"
    "                reached.append((pid, f'pidfd_getfd {target}'))\n"
    "print('REACHED', sorted(set(n for _, n in reached)), file=sys.stderr)\n"
    "def secret(x):\n    return 0"
)


@pytest.mark.timeout(120)
def test_the_judge_is_out_of_the_programs_reach(runner, outside):
    """A program reads every other process's memory, descriptors and environment it can, ptraces them and pulls
    their descriptors with pidfd_getfd: it reaches nothing of the judge's and passes nothing; the next program is
    judged as ever.  (Stopping or killing the judge, which a program of the same uid may do in user mode, is in
    SCRIPT_FORGERIES: it only fails the case.)"""
    steps = [{"code": "import os\n" + JUDGE_PROBE, "tests": SCRIPT}, {"code": HONEST, "tests": SCRIPT}]
    probe, honest = runner.run(steps)
    assert not probe["passed_asserts"], probe
    assert "REACHED" in probe["stderr"], probe
    reached = eval(probe["stderr"].split("REACHED", 1)[1].splitlines()[0])  # a list of strings it printed
    # in user mode the judge's /proc files belong to the program's uid: it may list the numbers in fd/, no more
    assert set(reached) <= ({"fd"} if probe["mode"] == "user" else set()), reached
    assert "TESTS:" not in probe["stderr"] and str(SECRET) not in probe["stderr"] + probe["stdout"]
    assert honest["passed_asserts"], honest


HONEST_SCRIPTS = {  # (program, tests): what proxies must get right
    "a class with state": (
        "class LRU:\n    def __init__(self, n):\n        self.n, self.d = n, {}\n"
        "    def put(self, k, v):\n        self.d.pop(k, None)\n        self.d[k] = v\n"
        "        if len(self.d) > self.n:\n            self.d.pop(next(iter(self.d)))\n"
        "    def get(self, k):\n        if k not in self.d:\n            return -1\n"
        "        self.d[k] = self.d.pop(k)\n        return self.d[k]\n",
        f"c = LRU(2)\nc.put(1, {SECRET})\nc.put(2, 222222)\nfirst = c.get(1)\nc.put(3, 3)\nsecond = c.get(2)\n"
        f"assert first == {SECRET}\nassert second == -1\nassert c.n == 2 and c.d == {{1: {SECRET}, 3: 3}}\n",
    ),
    "an object handed back": (
        "class Node:\n    def __init__(self, v, nxt=None):\n        self.v, self.nxt = v, nxt\n"
        "def reverse(head):\n    prev = None\n    while head:\n        head.nxt, prev, head = prev, head, head.nxt\n"
        "    return prev\n",
        "head = Node(1, Node(2, Node(3)))\nlast = head.nxt.nxt\nr = reverse(head)\n"
        "assert r is last and r.v == 3 and r.nxt.nxt is head and head.nxt is None\n",
    ),
    "in-place mutation": (
        "def sort_in_place(xs):\n    xs.sort()\ndef tally(d, k):\n    d[k] = d.get(k, 0) + 1\n"
        "def add_to(s, v):\n    s.add(v)\ndef upper(b):\n    b[:] = b.upper()\n",
        "xs = [3, 1, 2]\nys = xs\nsort_in_place(xs)\nd = {}\ntally(d, 'a')\ntally(d=d, k='a')\ns = set()\n"
        "add_to(s, 5)\nb = bytearray(b'ab')\nupper(b)\n"
        "assert ys == [1, 2, 3] and d == {'a': 2} and s == {5} and b == bytearray(b'AB')\n",
    ),
    "printed output": (
        "def hello(name):\n    print('hello,', name)\n    print('bye', flush=True)\n    return len(name)\n"
        "print('loaded')\n",
        "import contextlib, io\nf = io.StringIO()\nwith contextlib.redirect_stdout(f):\n    n = hello('x' * 70000)\n"
        "assert n == 70000 and f.getvalue() == 'hello, ' + 'x' * 70000 + '\\nbye\\n'\n",
    ),
    "printed to stderr": (
        "import sys\ndef warn(msg):\n    print('warning:', msg, file=sys.stderr)\n    return len(msg)\n",
        "import contextlib, io\nf = io.StringIO()\nwith contextlib.redirect_stderr(f):\n    n = warn('careful')\n"
        "assert n == 7 and f.getvalue() == 'warning: careful\\n'\n",
    ),
    "an expected exception": (
        "def root(x):\n    if x < 0:\n        raise ValueError('negative')\n    return x ** 0.5\n",
        "import math\ntry:\n    root(-1)\n    raised = False\nexcept ValueError as e:\n"
        "    raised = 'negative' in str(e)\nassert raised and math.isclose(root(2.0), 2 ** 0.5)\n",
    ),
    "a long integer": (  # past the 4300 digits a decimal text may have
        "def fact(n):\n    out = 1\n    for k in range(2, n + 1):\n        out *= k\n    return out\n",
        "import math\nfor n in [2000]:\n    assert fact(n) == math.factorial(n) and fact(n) % 10**10 == 0\n",
    ),
    "an encode and its decode": (
        "def encode(s):\n    return ''.join(chr((ord(c) - 94) % 26 + 97) for c in s)\n"
        "def decode(s):\n    return ''.join(chr((ord(c) - 100) % 26 + 97) for c in s)\n",
        "import random\nfor _ in range(20):\n    s = ''.join(random.choice('abcdefgh') for _ in range(15))\n"
        "    assert decode(encode(s)) == s\n",
    ),
}


@pytest.mark.timeout(120)
def test_honest_scripts_pass_through_the_proxies(runner, outside):
    """State across method calls, objects handed back and compared by identity, in-place mutation of arguments,
    output the tests capture (longer than a pipe holds), the program's exceptions, a decode checked against an
    encode's argument (run again alone, it passes again)."""
    steps = [{"code": program, "tests": tests} for _, (program, tests) in sorted(HONEST_SCRIPTS.items())]
    results = runner.run(steps)
    for name, r in zip(sorted(HONEST_SCRIPTS), results, strict=False):
        assert r["passed_asserts"] and r["cases"] and all(r["cases"]), (name, r["stderr"][-1500:])


THEFTS = {  # an encode whose decode answers with what the encode was given, however it keeps it
    "a global": "given = []\ndef encode(s):\n    given.append(s)\n    return 'x' * len(s)\n"
                "def decode(s):\n    return given[-1]\n",
    "a file": "def encode(s):\n    open('/dev/shm/k', 'w').write(s)\n    return 'x' * len(s)\n"
              "def decode(s):\n    return open('/dev/shm/k').read()\n",
    "the requests' pipe": (  # reads every request off the pipe as its own loop reads it, and answers from them
        "import os, re\nseen, _read = [], os.read\ndef _spy(fd, n):\n    data = _read(fd, n)\n"
        "    if fd == 5:\n        seen.append(data)\n    return data\nos.read = _spy\n"
        "def encode(s):\n    return 'x' * len(s)\ndef decode(s):\n"
        "    found = re.findall(rb'\"([a-h]{15})\"', b''.join(seen))\n    return found[-1].decode() if found else s\n"
    ),
    "an object of its own": (  # encode returns an object holding the argument: decode(obj) cannot run alone
        "class Box:\n    def __init__(self, s):\n        self.s = s\ndef encode(s):\n    return Box(s)\n"
        "def decode(box):\n    return box.s\n"
    ),
}


CODEC = (  # the same round trip through an object's two methods (LeetCode's "encode and decode strings")
    "class Codec:\n    def encode(self, s):\n        return ''.join(chr((ord(c) - 94) % 26 + 97) for c in s)\n"
    "    def decode(self, s):\n        return ''.join(chr((ord(c) - 100) % 26 + 97) for c in s)\n",
    "import random\nc = Codec()\nfor _ in range(20):\n    s = ''.join(random.choice('abcdefgh') for _ in range(15))\n"
    "    assert c.decode(c.encode(s)) == s\n",
)
CODEC_THIEF = ("class Codec:\n    def __init__(self):\n        self.given = []\n    def encode(self, s):\n"
               "        self.given.append(s)\n        return 'x' * len(s)\n    def decode(self, s):\n"
               "        return self.given[-1]\n")


@pytest.mark.timeout(180)
@pytest.mark.parametrize("theft", [*sorted(THEFTS), "an object's own methods"])
def test_a_script_call_cannot_answer_with_an_earlier_calls_argument(runner, outside, theft):
    """``assert decode(encode(s)) == s`` with random ``s``: the decode's result repeats the encode's argument, which
    the program's process saw; such calls run again in a process that never saw it, and a thief fails there.
    The same through one object's two methods (its making and the decode run again).  The honest program passes
    in the same sandbox."""
    honest, tests = CODEC if theft == "an object's own methods" else HONEST_SCRIPTS["an encode and its decode"]
    thief = CODEC_THIEF if theft == "an object's own methods" else THEFTS[theft]
    results = runner.run([{"code": thief, "tests": tests}, {"code": honest, "tests": tests}])
    assert not results[0]["passed_asserts"], results[0]
    assert results[1]["passed_asserts"], results[1]


# ---------------------------------------------------------------- time and leftovers


@pytest.mark.timeout(120)
def test_a_hanging_program_fails_within_one_timeout(runner, outside):
    """26 literal asserts against a program that never answers: every case fails, after one timeout's CPU seconds
    (not 26 of them), its CPU time being what the timeout counts."""
    tests = "".join(f"assert secret({i}) == {i}\n" for i in range(26))
    hang = "def secret(x):\n    while True:\n        pass"
    (result,) = runner.run([{"code": hang, "calls": tests, "limits": {"timeout": 2.0}}])
    assert result["status"] == "timeout" and result["cases"] == [False] * 26 and not result["backstop"]
    assert 2.0 <= result["cpu"] < 2 * 2.0, result["cpu"]


@pytest.mark.timeout(120)
def test_clocks_read_late_still_count_every_process(runner, outside):
    """The server reads the programs' clocks only once a limit could be reached (``docs/sandbox.md``, Time): a
    short program's CPU seconds are still counted whole, and three processes spinning at once are still stopped by
    the CPU timeout, the first look coming no later than the wall time on every CPU allows."""
    burn = "import time\nt = time.process_time()\nwhile time.process_time() - t < 0.3:\n    pass\nprint('done')\n"
    spin = "import os\nfor _ in range(2):\n    if os.fork() == 0:\n        break\nwhile True:\n    pass\n"
    short, spinning = runner.run([{"code": burn}, {"code": spin, "limits": {"timeout": 1.0}}])
    assert short["status"] == "exited" and short["stdout"] == "done\n" and 0.25 <= short["cpu"] < 1.0, short
    assert spinning["status"] == "timeout" and not spinning["backstop"] and 1.0 <= spinning["cpu"] < 3.0, spinning


def test_a_programs_stdio_behaves_as_its_descriptors_do(runner, outside):
    """The programs' text files are made once by the server (``runner.program_stdio``), each while its descriptor
    was of the kind a program's is: input read whole, output and errors where they belong, and each says it can
    seek exactly when a file made in the program would (an ``io`` program's pipes never; a literal-call program's
    stdin, ``/dev/null``, yes)."""
    probe = ("import sys\nprint(repr(sys.stdin.read()), sys.stdin.seekable(), sys.stdout.seekable(), "
             "sys.stderr.seekable())\nprint('e', file=sys.stderr)\n")
    calls = "import sys\ndef probe():\n    return [sys.stdin.read(), sys.stdin.seekable(), sys.stdout.seekable()]\n"
    io, literal = runner.run([{"code": probe, "stdin": "a\nb\n"},
                              {"code": calls, "calls": "assert probe() == ['', True, False]\n"}])
    assert io["stdout"] == "'a\\nb\\n' False False False\n" and io["stderr"] == "e\n", io
    assert literal["cases"] == [True], literal


@pytest.mark.timeout(120)
def test_a_killed_owner_leaves_no_process_and_no_folder(runner, outside):
    """What the worker pool's SIGKILL does to a worker: its sandbox, its cgroups and its processes go too."""
    sleeper = ("import subprocess, sys\n"
               f"subprocess.run([sys.executable, '-c', 'import time; time.sleep(10**6)', {MARKER!r}])")
    proc = runner.start([{"code": sleeper, "tests": "assert True", "limits": {"timeout": 100.0}}])
    deadline = time.monotonic() + 20
    while not marked_processes():
        assert time.monotonic() < deadline and proc.poll() is None, proc.stderr.read()
        time.sleep(0.05)
    driver = [int(p) for p in filter(str.isdigit, os.listdir("/proc"))
              if Path(f"/proc/{p}/cmdline").exists() and b"driver.py" in Path(f"/proc/{p}/cmdline").read_bytes()]
    for pid in driver:
        os.kill(pid, signal.SIGKILL)
    proc.wait(10)
    proc.stdout.close()
    proc.stderr.close()
    assert eventually(marked_processes) == []
    assert eventually(lambda: [f for pid in driver for f in leftover_folders(pid)]) == []


def test_the_suite_ran_in_the_mode_it_claims(runner):
    """Root gets root mode, with a cgroup wherever one can be made (CI's cgroup v1); others get user mode."""
    from reward_plugins.sandbox.cgroup import available

    (result,) = runner.run([{"code": "print(1)"}])
    if runner.who == "unprivileged" or os.geteuid() != 0:
        assert result["mode"] == "user"
    else:
        assert result["mode"] == "root" and result["cgroup"] == (available() is not None)


UNCOUNTED = """
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
def report(name, r):
    print(name, r, ctypes.get_errno(), flush=True)
report("shmget", libc.shmget(0x6772706F, 1 << 30, 0o1666))  # IPC_CREAT: a segment outlives its process
report("semget", libc.semget(0x6772706F, 1, 0o1666))
report("msgget", libc.msgget(0x6772706F, 0o1666))
report("memfd_create", libc.memfd_create(b"fill", 0))
"""


@pytest.mark.timeout(60)
def test_no_memory_that_no_limit_counts(runner, outside):
    """System V IPC and memfd hold pages no rlimit counts (a segment keeps them after its process is gone)."""
    watch = MemoryWatch()
    (result,) = runner.run([{"code": UNCOUNTED}])
    watch.stop()
    lines = dict(line.split(" ", 1) for line in result["stdout"].splitlines())
    assert set(lines) == {"shmget", "semget", "msgget", "memfd_create"}, result
    assert all(outcome.split() == ["-1", "1"] for outcome in lines.values()), lines


@pytest.mark.timeout(60)
def test_programs_leave_nothing_for_the_next_one(runner):
    """Files in the work folder and /dev/shm entries (POSIX shared memory) are removed between programs."""
    leave = ("import os\nfrom multiprocessing import shared_memory\n"
             "shared_memory.SharedMemory('left', create=True, size=4096)\n"
             "open('/dev/shm/also', 'w').write('x')\nopen('left', 'w').write('x')\nos.mkdir('folder')\n")
    find = ("import os\nassert os.listdir('/dev/shm') == [], os.listdir('/dev/shm')\n"
            "assert os.listdir('.') == [], os.listdir('.')\n")
    results = runner.run([{"code": leave, "tests": "assert True"}, {"code": find, "tests": "assert True"}])
    assert [r["passed_asserts"] for r in results] == [True, True], results


LEAVE_STATE = """
import os, resource, socket
def attempt(what, *args):
    try:
        what(*args)
    except OSError:
        pass
for folder in (".", "/dev/shm"):
    attempt(os.setxattr, folder, "user.left", b"{marker}")
    attempt(os.utime, folder, (12345, 67890))
attempt(os.chmod, ".", 0o500)
attempt(os.chmod, "/dev/shm", 0o700)
ours = {{os.getpid()}}
harness = [int(p) for p in filter(str.isdigit, os.listdir("/proc")) if int(p) not in ours and int(p) != 1]
for pid in harness:  # the server and the collector: programs of the same uid (user mode) may touch them
    attempt(resource.prlimit, pid, resource.RLIMIT_NOFILE, (10, 10))
    attempt(resource.prlimit, pid, resource.RLIMIT_AS, (64 << 20, 64 << 20))
    attempt(os.setpriority, os.PRIO_PROCESS, pid, 19)
    attempt(os.sched_setscheduler, pid, os.SCHED_IDLE, os.sched_param(0))
    attempt(os.sched_setaffinity, pid, {{0}})
pairs = [socket.socketpair() for _ in range(8)]
for a, b in pairs:  # filled, then each pair sent through itself and closed: alive only in flight
    a.setblocking(False)
    try:
        while True:
            a.send(b"x" * 65536)
    except BlockingIOError:
        pass
    attempt(socket.send_fds, a, [b"x"], [a.fileno(), b.fileno()])
    a.close()
    b.close()
"""

LOOK_STATE = """
import os, resource
for folder in (".", "/dev/shm"):
    st = os.stat(folder)
    print(folder, oct(st.st_mode & 0o7777), st.st_atime_ns // 10**9, st.st_mtime_ns // 10**9, os.listxattr(folder))
print("sockets", len(open("/proc/net/unix").read().splitlines()) - 1)
print("nice", os.getpriority(os.PRIO_PROCESS, 0), "policy", os.sched_getscheduler(0),
      "cpus", len(os.sched_getaffinity(0)) == os.cpu_count())
print("nofile", resource.getrlimit(resource.RLIMIT_NOFILE))
open("written", "w").write("x")
block = bytearray(180 << 20)
for i in range(0, len(block), 4096):
    block[i] = 1
print("allocated")
"""


@pytest.mark.timeout(120)
def test_no_state_survives_into_the_next_program(runner, outside):
    """What one program sets on the work folder and /dev/shm (xattrs, times, mode), on the server and the collector
    (rlimits, nice, SCHED_IDLE, affinity; possible in user mode), and sockets it leaves in flight with SCM_RIGHTS
    holding memory: the next program sees none of it, and an honest 180 MiB program still runs in 256 MiB."""
    limits = {"timeout": 10.0, "memory": 256 << 20}
    look = {"code": LOOK_STATE, "limits": limits}
    first, _, after = runner.run([look, {"code": LEAVE_STATE.format(marker=MARKER), "limits": limits}, look])
    assert first["exit_code"] == 0 and after["exit_code"] == 0, (first, after)
    seen = dict(line.partition(" ")[::2] for line in after["stdout"].splitlines())
    fresh = dict(line.partition(" ")[::2] for line in first["stdout"].splitlines())
    for folder in (".", "/dev/shm"):
        mode, atime, mtime, xattrs = seen[folder].split(" ", 3)
        assert mode == fresh[folder].split(" ")[0] and xattrs == "[]", seen[folder]
        assert atime != "12345" and mtime != "67890", seen[folder]
    assert seen["sockets"] == "0" and seen["nofile"] == "(64, 64)" and "allocated" in seen, seen
    assert seen["nice"] == "0 policy 0 cpus True", seen


SET_SCHEDULING = """
import ctypes, os, platform, struct
libc = ctypes.CDLL(None, use_errno=True)
SETATTR = {"x86_64": 314, "aarch64": 274}[platform.machine()]
CLAMP_MAX, KEEP_POLICY = 0x40, 0x08  # SCHED_FLAG_UTIL_CLAMP_MAX, SCHED_FLAG_KEEP_POLICY
for pid in [int(p) for p in filter(str.isdigit, os.listdir("/proc")) if int(p) != os.getpid()]:
    # size, policy, flags, nice, priority, runtime (a fair task's slice), deadline, period, util min, util max
    for flags, runtime in ((CLAMP_MAX | KEEP_POLICY, 0), (KEEP_POLICY, 3_000_000)):
        attr = struct.pack("IIQiIQQQII", 56, 0, flags, 0, 0, runtime, 0, 0, 0, 128)
        libc.syscall(SETATTR, pid, attr, 0)
    for name, value in (("oom_score_adj", "900"), ("coredump_filter", "0x7f"), ("autogroup", "19")):
        try:
            with open(f"/proc/{pid}/{name}", "w") as f:
                f.write(value)
        except OSError:
            pass
"""

LOOK_SCHEDULING = """
import ctypes, os, platform
libc = ctypes.CDLL(None, use_errno=True)
GETATTR = {"x86_64": 315, "aarch64": 275}[platform.machine()]
attr = ctypes.create_string_buffer(56)
print("sched", libc.syscall(GETATTR, os.getppid(), attr, 56, 0), attr.raw[4:].hex())
for name in ("oom_score_adj", "coredump_filter", "autogroup"):
    try:
        text = open(f"/proc/{os.getppid()}/{name}").read().split()
        print(name, text[-1])  # the autogroup's nice (its number is the server's session's)
    except OSError as exc:
        print(name, exc.errno)
"""


@pytest.mark.timeout(120)
def test_no_scheduling_or_proc_attribute_of_the_server_survives(runner, outside):
    """What a program sets on the server (its parent) or the collector with ``sched_setattr`` (a utilisation clamp,
    a fair task's slice) or through /proc (OOM score, core dump filter, autogroup nice), which programs of the
    server's uid may do in ``user`` mode: the next program reads the server's attributes as a fresh sandbox has
    them."""
    look = {"code": LOOK_SCHEDULING}
    first, _, after = runner.run([look, {"code": SET_SCHEDULING}, look])
    assert first["exit_code"] == 0 and after["exit_code"] == 0, (first, after)
    assert after["stdout"] == first["stdout"], (first["stdout"], after["stdout"])


@pytest.mark.timeout(120)
def test_a_thread_writing_to_the_result_channel_does_not_extend_the_time(runner, outside):
    """Each answered call earns the next a full timeout, so lines that are not answers must earn nothing: a hanging
    program whose thread writes newlines (or answers them all at once) is ended at once, failing every case."""
    tests = "".join(f"assert secret({i}) == {i}\n" for i in range(26))
    newlines = ("import os, threading, time\ndef spam():\n    while True:\n        os.write(3, b'\\n')\n"
                "        time.sleep(0.2)\nthreading.Thread(target=spam, daemon=True).start()\n"
                "def secret(x):\n    while True:\n        pass")
    answers = "import os\nos.write(3, b'=\\n' + b'!\\n' * 26)\ndef secret(x):\n    while True:\n        pass"
    results = runner.run([{"code": code, "calls": tests, "limits": {"timeout": 2.0}} for code in (newlines, answers)])
    assert [r["cases"] for r in results] == [[False] * 26] * 2, results
    assert all(r["cpu"] < 2 * 2.0 for r in results), results  # one timeout's CPU seconds each, not 26 of them


@pytest.mark.timeout(120)
def test_programs_die_with_the_scoring_process(runner, outside):
    """The scoring process (the worker's parent) is SIGKILLed while a program with a 100 s timeout runs: the
    worker would notice only after the row, the sandbox notices at once, and nothing of the program survives."""
    sleeper = ("import subprocess, sys\n"
               f"subprocess.run([sys.executable, '-c', 'import time; time.sleep(10**6)', {MARKER!r}])")
    proc = runner.start([{"code": sleeper, "limits": {"timeout": 100.0}}], env={"DRIVER_FORK": "1"})

    def drivers() -> set[int]:
        found = set()
        for p in marked_processes():
            try:
                if b"driver.py" in Path(f"/proc/{p}/cmdline").read_bytes():
                    found.add(p)
            except OSError:
                pass
        return found

    deadline = time.monotonic() + 20
    while not set(marked_processes()) - drivers():  # the program's sleeper is running
        assert time.monotonic() < deadline and proc.poll() is None, proc.stderr.read()
        time.sleep(0.05)
    found = drivers()
    parent = {pid: int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1]) for pid in found}
    (worker,) = [pid for pid in found if parent[pid] in found and pid not in parent.values()]
    os.kill(parent[worker], signal.SIGKILL)  # the scoring process (runuser, above it, stays)
    assert eventually(marked_processes, 10.0) == []
    proc.wait(20)
    proc.stdout.close()
    proc.stderr.close()


def test_a_name_with_the_markers_pattern_is_what_the_checks_look_for():
    """The outside checks are live: a real marked process and a real leftover folder are found."""
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)", MARKER])
    folder = Path(tempfile.mkdtemp(prefix=f"grpo-host-code-{proc.pid}-"))
    try:
        assert eventually(lambda: not marked_processes()) is False
        assert leftover_folders(proc.pid) == [str(folder)]
    finally:
        proc.kill()
        proc.wait()
        folder.rmdir()
    assert re.fullmatch(r"grpo-code-escape-[0-9a-f]{12}", MARKER)


# ---------------------------------------------------------------- the script judge (issue 22's red team)

OWN_NAMES = (  # speaks the protocol itself: its names message adds builtins and dunders as its own functions
    "import os, json\ndef _m(body):\n    data = json.dumps(body).encode()\n"
    "    os.write(3, len(data).to_bytes(4, 'big') + data)\n_objs = []\ndef _h(o):\n"
    "    _objs.append(o)\n    return {'h': len(_objs) - 1}\n"
    "def total(xs):\n    return -1\n"
    "_m({'i': 0, 'names': {'total': _h(total), 'zip': _h(lambda *a: []), 'range': _h(lambda *a: []),"
    " 'abs': _h(lambda x: 0), '__builtins__': _h(0), 'all': _h(lambda x: True)}})\n"
    "_buf = b''\nwhile True:\n    while len(_buf) < 4 or len(_buf) < 4 + int.from_bytes(_buf[:4], 'big'):\n"
    "        c = os.read(5, 65536)\n        if not c:\n            os._exit(0)\n        _buf += c\n"
    "    n = int.from_bytes(_buf[:4], 'big')\n    req = json.loads(_buf[4:4 + n])\n    _buf = _buf[4 + n:]\n"
    "    _m({'i': req['i'], 'v': _objs[req['t']](*req.get('a', []))})\n"
)
HIJACK_NAMES = (  # patches the server's own message(): the same extra names, with the server's real handles
    "import __main__ as _R\n_orig_tag, _orig_msg, _cap = _R.plain.tag, _R.message, {}\n"
    "def _tag(value, ref=None, depth=0):\n    if ref is not None:\n        _cap['ref'] = ref\n"
    "    return _orig_tag(value, ref, depth)\n_R.plain.tag = _tag\n"
    "def _msg(fd, body):\n    if body.get('i') == 0 and 'names' in body and 'ref' in _cap:\n"
    "        for name in ('range', 'zip', 'enumerate', 'all'):\n"
    "            body['names'][name] = {'h': _cap['ref'](lambda *a: [])}\n"
    "        body['names']['abs'] = {'h': _cap['ref'](lambda x: 0)}\n"
    "    return _orig_msg(fd, body)\n_R.message = _msg\ndef total(xs):\n    return -1\n"
)
NAME_TESTS = (  # each passes only if the tests' own builtins are used
    "inputs = [[1, 2, 3], [4, 5]]\noutputs = [6, 9]\nfor inp, out in zip(inputs, outputs):\n"
    "    assert total(inp) == out\n",
    "for x in [[1, 2, 3]]:\n    assert abs(total(x) - 6) < 1e-9\n",
    "cases = [([1, 2], 3), ([5], 5)]\nassert all(total(a) == b for a, b in cases)\n",
)


@pytest.mark.timeout(180)
def test_the_judge_binds_only_the_names_the_tests_take_from_the_program(runner, outside):
    """F1: the program's names message (however the program writes it: its own loop on fds 3 and 5, or the
    server's message() patched) cannot add a name, shadow a builtin (zip, abs, all, range) or bind a dunder: the
    judge binds the plan's names only, so a wrong ``total`` fails; the honest one passes the same tests."""
    steps = []
    for tests in NAME_TESTS:
        steps += [{"code": OWN_NAMES, "tests": tests, "limits": {"timeout": 3.0}},
                  {"code": HIJACK_NAMES, "tests": tests, "limits": {"timeout": 3.0}},
                  {"code": "def total(xs):\n    return sum(xs)\n", "tests": tests}]
    results = runner.run(steps)
    for i in range(0, len(results), 3):
        own, hijack, honest = results[i:i + 3]
        assert not own["passed_asserts"] and not any(own["cases"]), own
        assert not hijack["passed_asserts"] and not any(hijack["cases"]), hijack
        assert honest["passed_asserts"] and all(honest["cases"]), honest


ADD = "def add(a, b):\n    return a + b\n"
ADD_WRONG = "def add(a, b):\n    return 0 if (a, b) != (0, 0) else 0\n"
UNRUN_TESTS = {  # F2/F3: statements after the last top-level assert, and checks a test framework would run
    "a loop after the last assert": "assert add(0, 0) == 0\nfor a, b in [(1, 2), (5, 5)]:\n"
                                    "    assert add(a, b) == a + b\n",
    "check(add) after an assert": "assert add(0, 0) == 0\ndef check(candidate):\n    for a in range(1, 4):\n"
                                  "        assert candidate(a, a) == 2 * a\ncheck(add)\n",
    "a try block after the last assert": "assert add(0, 0) == 0\ntry:\n    add('a', 1)\n    failed = True\n"
                                         "except TypeError:\n    failed = False\nassert not failed\n"
                                         "try:\n    add(None, 1)\n    raise AssertionError('no TypeError')\n"
                                         "except TypeError:\n    pass\n",
    "pytest functions": "def test_small():\n    assert add(1, 2) == 3\ndef test_big():\n"
                        "    assert add(10**20, 1) == 10**20 + 1\n",
    "a TestCase class": "import unittest\nclass T(unittest.TestCase):\n    def test_a(self):\n"
                        "        self.assertEqual(add(1, 2), 3)\n    def test_b(self):\n"
                        "        self.assertEqual(add(-4, 2), -2)\n",
    "unittest.main()": "import unittest\nclass T(unittest.TestCase):\n    def test_a(self):\n"
                       "        self.assertEqual(add(1, 2), 3)\nif __name__ == '__main__':\n    unittest.main()\n",
    "a __main__ block": "def check(candidate):\n    assert candidate(2, 3) == 5\nif __name__ == '__main__':\n"
                        "    check(add)\n",
}


@pytest.mark.timeout(180)
def test_no_statement_of_the_tests_is_left_unrun(runner, outside):
    """F2/F3: the statements after the last top-level assert run (with the last case), pytest's test_* functions
    are called, unittest's TestCase classes run (by unittest.main() too), a ``__main__`` block runs: a wrong add
    (and an empty program) fails some case of each, the honest add passes them all, in both modes."""
    steps = []
    for _, tests in sorted(UNRUN_TESTS.items()):
        steps += [{"code": ADD_WRONG, "tests": tests}, {"code": "pass\n", "tests": tests},
                  {"code": ADD, "tests": tests}]
    results = runner.run(steps)
    for n, name in enumerate(sorted(UNRUN_TESTS)):
        wrong, empty, honest = results[3 * n:3 * n + 3]
        assert not wrong["passed_asserts"] and not all(wrong["cases"]), (name, wrong)
        assert not empty["passed_asserts"] and not all(empty["cases"]), (name, empty)
        assert honest["passed_asserts"] and all(honest["cases"]), (name, honest["stderr"][-1500:])


MODULE_TESTS = {  # F4: a standard module the tests use without importing it is the judge's, never the program's
    "math.isclose": ("import math\ndef area(r):\n    return 3.0 * r * r\nmath.isclose = lambda *a, **k: True\n",
                     "import math\ndef area(r):\n    return math.pi * r * r\n",
                     "for r in [1.0, 2.5]:\n    assert math.isclose(area(r), math.pi * r * r)\n"),
    "a fake module object": ("class _M:\n    def isclose(self, *a, **k):\n        return True\n    pi = 3.0\n"
                             "math = _M()\ndef area(r):\n    return 1.0\n",
                             "import math as m\ndef area(r):\n    return m.pi * r * r\n",
                             "for r in [1.0, 2.5]:\n    assert math.isclose(area(r), math.pi * r * r)\n"),
    "heapq from the program's import": ("import heapq\nheapq.heappop = lambda h: 1\ndef kth(xs, k):\n    return 1\n",
                                        "import heapq\ndef kth(xs, k):\n    return heapq.nsmallest(k, xs)[-1]\n",
                                        "xs = [5, 3, 9, 1]\nh = list(xs)\nheapq.heapify(h)\n"
                                        "assert kth(xs, 1) == heapq.heappop(h) and kth(xs, 3) == 5\n"),
    "the program's object of a module's name": (
        "class MyCalendar:\n    def book(self, s, e):\n        return False\ncalendar = MyCalendar()\n",
        "class MyCalendar:\n    def __init__(self):\n        self.b = []\n    def book(self, s, e):\n"
        "        if any(s < y and x < e for x, y in self.b):\n            return False\n"
        "        self.b.append((s, e))\n        return True\ncalendar = MyCalendar()\n",
        "for s, e, ok in [(10, 20, True), (15, 25, False), (20, 30, True)]:\n    assert calendar.book(s, e) == ok\n"),
}


def wrong_fails_honest_passes(runner, table: dict[str, tuple[str, str, str]]) -> None:
    """Each entry's (wrong program, honest program, tests), in one warm sandbox: the wrong one fails, the honest
    one passes every case."""
    steps = []
    for _, (wrong, honest, tests) in sorted(table.items()):
        steps += [{"code": wrong, "tests": tests}, {"code": honest, "tests": tests}]
    results = runner.run(steps)
    for n, name in enumerate(sorted(table)):
        wrong, honest = results[2 * n:2 * n + 2]
        assert not wrong["passed_asserts"], (name, wrong)
        assert honest["passed_asserts"] and all(honest["cases"]), (name, honest["stderr"][-1500:])


@pytest.mark.timeout(180)
def test_a_module_the_tests_do_not_import_is_the_judges(runner, outside):
    """F4: ``math.isclose`` in tests that never import math is the judge's math, whatever the program patched
    or bound to that name; an honest program (which imported math itself) passes; a program's own object of a
    module's name that the tests use as the program's (``calendar.book``, which the module lacks) stays the
    program's, so the honest one passes and the wrong one fails."""
    wrong_fails_honest_passes(runner, MODULE_TESTS)


EXCEPTIONS = {  # F5: (wrong program, honest program, tests)
    "StopIteration ends no map of the tests": (
        "def add(a, b):\n    raise StopIteration\n", ADD,
        "cases = [((1, 2), 3), ((2, 2), 4)]\nassert all(map(lambda c: add(*c[0]) == c[1], cases))\n"),
    "StopIteration ends no generator of the tests": (
        "def add(a, b):\n    if a > 1:\n        raise StopIteration\n    return a + b\n", ADD,
        "assert all(add(a, 1) == a + 1 for a in range(5))\n"),
    "StopAsyncIteration": ("def add(a, b):\n    raise StopAsyncIteration\n", ADD,
                           "try:\n    add(1, 2)\n    ok = True\nexcept Exception as e:\n"
                           "    ok = type(e) is not StopAsyncIteration\nfor c in [1]:\n"
                           "    assert ok and add(c, c) == 2\n"),
    "a subclass of ValueError": (
        "class BadInput(Exception):\n    pass\ndef parse(s):\n    raise BadInput('bad: ' + s)\n",
        "class BadInput(ValueError):\n    pass\ndef parse(s):\n    if not s.isdigit():\n"
        "        raise BadInput('bad: ' + s)\n    return int(s)\n",
        "for s in ['x1']:\n    try:\n        parse(s)\n        raised = ''\n    except ValueError as e:\n"
        "        raised = str(e)\n    assert raised == 'bad: x1' and parse('12') == 12\n"),
    "a KeyError's text": (
        "def get(d, k):\n    raise KeyError(repr(k))\n", "def get(d, k):\n    return d[k]\n",
        "for k in ['b']:\n    try:\n        get({'a': 1}, k)\n    except KeyError as e:\n"
        "        assert str(e) == \"'b'\" and e.args == ('b',)\n    else:\n        assert False\n"),
    "a change made before raising": (
        "def drain(xs):\n    raise IndexError('empty')\n",
        "def drain(xs):\n    while xs:\n        xs.pop()\n    raise IndexError('empty')\n",
        "xs = [1, 2, 3]\nfor _ in [0]:\n    try:\n        drain(xs)\n    except IndexError:\n        pass\n"
        "    assert xs == []\n"),
}


@pytest.mark.timeout(180)
def test_the_programs_exceptions_arrive_as_the_tests_expect(runner, outside):
    """F5: a program's StopIteration or StopAsyncIteration arrives as a program error, never as itself (it would
    end the tests' map or generator as if it had run through); a subclass of a builtin exception arrives as its
    nearest builtin base, with its exact arguments; what a call changed in its arguments before it raised comes
    back.  The wrong program fails each, the honest one passes, in both modes."""
    wrong_fails_honest_passes(runner, EXCEPTIONS)


SEVENS = "".join(f"assert f({n}) == {7 * n}\n" for n in range(10))
CRAFTED_LINES = {  # F10: a literal-call program's result lines that no decoder may choke on
    "an overflowing float": b'=\\n{"f":"0x1p99999"}\\n',
    "an overflowing complex": b'=\\n{"c":["0x1p99999","0x0p0"]}\\n',
    "an unhashable set member": b'=\\n{"s":[[1]]}\\n',
    "a deep list": b'=\\n' + b'[' * 5000 + b']' * 5000 + b'\\n',
}


@pytest.mark.timeout(120)
def test_a_crafted_result_line_fails_its_row_at_once(runner, outside):
    """F10: a result line that decodes to an error other than ValueError (float.fromhex's OverflowError) once
    killed the collector, and the host waited the whole budget: now the row fails at once (not crashed, well
    inside its timeout of 10 s) and the next honest row in the same sandbox passes."""
    steps = []
    for _, line in sorted(CRAFTED_LINES.items()):
        steps += [{"code": f"import os\nos.write(3, b'{line.decode()}')\nos._exit(0)\ndef f(x):\n    return 7 * x\n",
                   "calls": SEVENS, "limits": {"timeout": 10.0}},
                  {"code": "def f(x):\n    return 7 * x\n", "calls": SEVENS}]
    results = runner.run(steps)
    for n, name in enumerate(sorted(CRAFTED_LINES)):
        crafted, honest = results[2 * n:2 * n + 2]
        # "exited", not "crashed": a host that waited out the budget for a reply that never came says crashed
        assert crafted["status"] == "exited" and not any(crafted["cases"]), (name, crafted)
        assert all(honest["cases"]), (name, honest)


def runner_rss_peak(proc: subprocess.Popen) -> int:
    """The largest resident size (bytes) any sandbox runner.py process reached while ``proc`` ran (polled)."""
    peak = 0
    while proc.poll() is None:
        for p in filter(str.isdigit, os.listdir("/proc")):
            try:
                if b"runner.py" in Path(f"/proc/{p}/cmdline").read_bytes():
                    status = Path(f"/proc/{p}/status").read_text()
                    peak = max(peak, int(status.split("VmRSS:")[1].split()[0]) * 1024)
            except (OSError, IndexError, ValueError):
                pass
        time.sleep(0.02)
    return peak


@pytest.mark.timeout(120)
def test_one_crafted_answer_cannot_take_the_judge_past_the_rows_memory(runner, outside):
    """F11: a call answering with 21 MB of ``[[],[],...]`` (a few hundred MB once decoded) in a row limited to
    256 MiB: the judge's decoding ends in MemoryError within the row's memory, the case fails, the next honest
    row passes."""
    crafted = ("import os, time\ndef f(x):\n    body = b'{\"i\":1,\"v\":[' + b'[],' * (21 * 349525) + b'[]]}'\n"
               "    os.write(3, len(body).to_bytes(4, 'big') + body)\n    time.sleep(30)\n")
    tests = "for x in [1]:\n    assert f(x) == 1\n"
    steps = [{"code": crafted, "tests": tests, "limits": {"timeout": 10.0, "memory": 256 << 20}},
             {"code": "def f(x):\n    return 1\n", "tests": tests}]
    proc = runner.start(steps)
    peak = runner_rss_peak(proc)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err[-3000:]
    crafted_run, honest = json.loads(out.splitlines()[-1])[:2]
    assert not crafted_run["passed_asserts"], crafted_run
    assert honest["passed_asserts"], honest
    assert peak < 300 << 20, peak  # the judge held to the row's 256 MiB (it reached ~480 MiB before)


ROUND_TRIPS = {  # F7/F8/F9: (thief, honest, tests, literal calls?)
    "an int back as a float": (
        "seen = []\ndef enc(n):\n    seen.append(n)\n    return 'x'\ndef dec(s):\n    return float(seen[-1])\n",
        "def enc(n):\n    return str(n)[::-1]\ndef dec(s):\n    return int(s[::-1])\n",
        "import random\nfor _ in range(5):\n    n = random.randrange(10**6, 10**7)\n"
        "    assert dec(enc(n)) == n\n", False),
    "a list of ints back as floats": (
        "seen = []\ndef enc(xs):\n    seen.append(xs)\n    return 'x'\ndef dec(s):\n"
        "    return [float(v) for v in seen[-1]]\n",
        "def enc(xs):\n    return ','.join(map(str, xs))\ndef dec(s):\n"
        "    return [int(v) for v in s.split(',')]\n",
        "import random\nfor _ in range(5):\n    xs = random.sample(range(10**6), 5)\n"
        "    assert dec(enc(xs)) == xs\n", False),
    "a set back as a frozenset": (
        "seen = []\ndef enc(s):\n    seen.append(s)\n    return 'x'\ndef dec(t):\n    return frozenset(seen[-1])\n",
        "def enc(s):\n    return sorted(s)\ndef dec(t):\n    return set(t)\n",
        "import random\nfor _ in range(5):\n    s = set(random.sample(range(10**6), 5))\n"
        "    assert dec(enc(s)) == s\n", False),
    "a method round trip through a guessable value": (
        "class Codec:\n    def __init__(self):\n        self.g = []\n    def encode(self, s):\n"
        "        self.g.append(s)\n        return ''\n    def decode(self, t):\n        return self.g[-1]\n",
        CODEC[0], CODEC[1], False),
    "a method round trip through an object": (
        "class Token:\n    pass\nclass Codec:\n    def __init__(self):\n        self.g = []\n    def encode(self, s):\n"
        "        self.g.append(s)\n        return Token()\n    def decode(self, t):\n        return self.g[-1]\n",
        CODEC[0], CODEC[1], False),
    "an object back as itself (LeetCode 297)": (
        "class Codec:\n    def serialize(self, root):\n        self.root = root\n        return 'tree'\n"
        "    def deserialize(self, data):\n        return self.root\n",
        "class Codec:\n    def serialize(self, root):\n        out = []\n        def walk(n):\n"
        "            if n is None:\n                out.append('#')\n                return\n"
        "            out.append(str(n.val))\n            walk(n.left)\n            walk(n.right)\n        walk(root)\n"
        "        return ','.join(out)\n"
        "    def deserialize(self, data):\n        it = iter(data.split(','))\n        def build():\n"
        "            v = next(it)\n            if v == '#':\n                return None\n"
        "            return TreeNode(int(v), build(), build())\n        return build()\n"
        "class TreeNode:\n    def __init__(self, val, left=None, right=None):\n"
        "        self.val, self.left, self.right = val, left, right\n",
        "root = TreeNode(1, TreeNode(2), TreeNode(3, TreeNode(4)))\nc = Codec()\nfor _ in [0]:\n"
        "    back = c.deserialize(c.serialize(root))\n"
        "    assert back.val == 1 and back.left.val == 2 and back.right.left.val == 4 and back.right.right is None\n",
        False),
    "literal calls: an int back as a float": (
        "seen = []\ndef convert(x, mode):\n    if mode == 'enc':\n        seen.append(x)\n"
        "        return ''.join(chr(97 + int(d)) for d in str(x))\n    return float(seen[-1]) if seen else 0\n",
        "def convert(x, mode):\n    if mode == 'enc':\n        return ''.join(chr(97 + int(d)) for d in str(x))\n"
        "    return int(''.join(str(ord(c) - 97) for c in x))\n",
        "assert convert(987654321, 'enc') == 'jihgfedcb'\nassert convert('jihgfedcb', 'dec') == 987654321\n", True),
}


@pytest.mark.timeout(240)
def test_a_round_trip_cannot_answer_with_what_it_was_given_by_value(runner, outside):
    """F7/F8/F9: a decode answering with an earlier argument in another type that ``==`` still makes equal (int
    as float, set as frozenset), through an object's methods whose intermediate is guessable ('') or an object,
    or with the very object an earlier call was given (deserialize(serialize(root)) is root), in script and
    literal-call mode: each thief fails; each honest program of the same shape passes."""
    steps = []
    for _, (thief, honest, tests, literal) in sorted(ROUND_TRIPS.items()):
        field = "calls" if literal else "tests"
        steps += [{"code": thief, field: tests}, {"code": honest, field: tests}]
    results = runner.run(steps)
    for n, name in enumerate(sorted(ROUND_TRIPS)):
        thief, honest = results[2 * n:2 * n + 2]
        assert not all(thief["cases"]), (name, thief)
        assert all(honest["cases"]) and honest["cases"], (name, honest["stderr"][-1500:])


@pytest.mark.timeout(120)
def test_an_honest_involution_with_many_suspects_is_not_an_output_limit(runner, outside):
    """The judge's list of suspects is the judge's, not the program's output: ``rev(rev(xs)) == xs`` over 100
    lists of 1000 ints (each rev a suspect, all run again) passes under the default max_output."""
    tests = ("import random\nfor _ in range(100):\n    xs = [random.randrange(10**9) for _ in range(1000)]\n"
             "    assert rev(rev(xs)) == xs\n")
    result, = runner.run([{"code": "def rev(xs):\n    return xs[::-1]\n", "tests": tests,
                           "limits": {"timeout": 20.0}}])
    assert result["status"] == "exited" and result["passed_asserts"], result
