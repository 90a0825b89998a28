"""Hostile programs against the code reward's sandbox: each scores 0 and leaves nothing behind.

Every case runs through the registered ``code`` reward (scored in this
process, with its warm sandbox), and then checks what a user would care
about: the score is 0, this process is alive, no process of the program is
left anywhere on the machine (by a marker in the command line, by the
programs' host uid, and by the sandbox's PID namespace holding only its init
and the fork server), nothing with the marker appeared in host directories,
and the same sandbox (or its replacement) still scores a correct program.
"""

from __future__ import annotations

import os
import socket
import time
import uuid
from pathlib import Path

import pytest

from grpo_host import Ensemble, get_reward
from reward_plugins.code.reward import shared_sandbox
from reward_plugins.code.sandbox import isolation

pytestmark = pytest.mark.skipif(
    not isolation().isolated, reason=f"no bubblewrap sandbox here ({isolation().reason}): hostile code is not run"
)

MARKER = f"grpo-code-escape-{uuid.uuid4().hex[:12]}"
HOST_DIRS = ["/etc", "/tmp", "/var/tmp", "/dev/shm", "/root", "/", str(Path.cwd()), str(Path(__file__).parent)]

# Tries to leave a file with the marker in every host directory above; every hostile program starts with it.
PRELUDE = f"""
import os
for _d in {HOST_DIRS!r}:
    try:
        with open(os.path.join(_d, {MARKER!r}), "w") as _f:
            _f.write("escaped")
    except OSError:
        pass
"""

HOSTILE = {
    "fork_bomb": "while True:\n    os.fork()",
    "posix_spawn": (
        "import sys\n"
        "while True:\n"
        f"    os.posix_spawn(sys.executable, [sys.executable, '-c', 'import time; time.sleep(10**6)', {MARKER!r}],"
        " dict(os.environ))"
    ),
    "ctypes_fork": (
        "import ctypes, time\n"
        "libc = ctypes.CDLL(None)\n"
        "while True:\n"
        "    if libc.fork() < 0:\n"
        "        time.sleep(10**6)"
    ),
    "busy_loop": "while True:\n    pass",
    "sleep": "import time\ntime.sleep(10**6)",
    "allocate_50gb": "block = bytearray(50 * 1024**3)\nblock[-1] = 1",
    "write_etc": f"with open('/etc/{MARKER}', 'w') as f:\n    f.write('pwned')",
    "kill_parent": "os.kill(os.getppid(), 9)",
    "setsid_grandchild": (
        "import sys, time\n"
        "if os.fork() == 0:\n"
        "    os.setsid()\n"
        "    if os.fork() == 0:\n"
        "        beat = ('import time\\nwhile True:\\n'\n"
        "                '    open(\"heartbeat\", \"a\").write(\".\")\\n    time.sleep(0.01)')\n"
        f"        os.execv(sys.executable, [sys.executable, '-c', beat, {MARKER!r}])\n"
        "    os._exit(0)\n"
        "time.sleep(10**6)"
    ),
    "print_1gb": "import sys\nchunk = 'x' * (1 << 20)\nfor _ in range(1024):\n    sys.stdout.write(chunk)",
}

SPAWN_SLEEPER = (
    "import subprocess, sys\n"
    f"subprocess.run([sys.executable, '-c', 'import time; time.sleep(10**6)', {MARKER!r}])"
)


def fenced(source: str) -> str:
    return f"Here is my solution:\n```python\n{source}\n```\n"


@pytest.fixture(scope="module")
def code():
    """The installed ``code`` reward with a short per-program timeout; its sandbox is closed at the end."""
    reward = get_reward("code").bind({"timeout": 2.0})
    yield reward
    shared_sandbox().close()


def marked_processes() -> list[int]:
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/cmdline", "rb") as f:
                if MARKER.encode() in f.read():
                    found.append(int(name))
        except OSError:
            pass
    return found


def processes_of_uid(uid: int) -> list[int]:
    found = []
    for name in os.listdir("/proc"):
        try:
            if name.isdigit() and os.stat(f"/proc/{name}").st_uid == uid:
                found.append(int(name))
        except OSError:
            pass
    return found


def in_namespace(namespace: str) -> list[int]:
    found = []
    for name in os.listdir("/proc"):
        try:
            if name.isdigit() and os.readlink(f"/proc/{name}/ns/pid") == namespace:
                found.append(int(name))
        except OSError:
            pass
    return found


def eventually(check, seconds: float = 3.0):
    """Kills are asynchronous: poll ``check()`` until it is falsy (returns the last value)."""
    deadline = time.monotonic() + seconds
    while (value := check()) and time.monotonic() < deadline:
        time.sleep(0.05)
    return value


def assert_nothing_left(sandbox, namespace: str, host_uid: int | None) -> None:
    assert eventually(marked_processes) == [], "a process with the program's marker survived"
    if host_uid is not None:
        assert eventually(lambda: processes_of_uid(host_uid)) == [], "a process of the programs' uid survived"
    alive = sandbox.processes()
    # Either the same sandbox is idle (its init and the fork server only) or it was torn down entirely.
    if alive:
        assert os.readlink(f"/proc/{alive[0]}/ns/pid") == namespace and len(alive) == 2, alive
    else:
        assert eventually(lambda: in_namespace(namespace)) == [], "the torn-down sandbox left processes"
    for directory in HOST_DIRS:
        assert not os.path.exists(os.path.join(directory, MARKER)), f"the program wrote into {directory}"


@pytest.mark.timeout(60)
@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_hostile_program_scores_zero_and_leaves_nothing(code, name):
    assert code.score_one(fenced("print('warm')"), tests=[{"input": "", "output": "warm"}]) == 1.0
    sandbox = shared_sandbox()
    namespace = os.readlink(f"/proc/{sandbox.processes()[0]}/ns/pid")
    host_uid = sandbox.host_uid if sandbox.mode == "root" else None
    start = time.monotonic()

    score = code.score_one(fenced(PRELUDE + HOSTILE[name]), tests="assert True")

    assert score == 0.0
    assert time.monotonic() - start < 30
    assert_nothing_left(sandbox, namespace, host_uid)
    # The work dir is empty again and nothing is writing into it: a later program sees a clean directory.
    later = "import os, time\ntime.sleep(0.2)\nassert os.listdir('.') == [], os.listdir('.')"
    assert code.score_one(fenced(later), tests="assert True") == 1.0


@pytest.mark.timeout(60)
def test_listener_on_localhost_sees_no_connection(code):
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(8)
        port = listener.getsockname()[1]
        attack = (
            "import socket\n"
            f"s = socket.create_connection(('127.0.0.1', {port}), timeout=1)\n"
            "s.sendall(b'exfiltrated')\n"
        )
        assert code.score_one(fenced(PRELUDE + attack), tests="assert True") == 0.0
        listener.setblocking(False)
        with pytest.raises(BlockingIOError):
            listener.accept()


@pytest.mark.timeout(120)
def test_hostile_batch_through_ensemble_workers():
    """The process executor path: workers with their own sandboxes survive a hostile batch and keep scoring."""
    names = ["fork_bomb", "kill_parent", "setsid_grandchild", "print_1gb", "sleep"]
    completions = [fenced(HOSTILE[n]) for n in names] + [fenced("print(int(input()) * 2)")]
    tests = ["assert True"] * len(names) + [[{"input": "21", "output": "42"}]]
    with Ensemble.from_spec("code(timeout=2)", workers=2) as ensemble:
        result = ensemble.score(completions, tests=tests)
        assert result.values["code"] == [0.0] * len(names) + [1.0]
        metrics = result.metrics["code"]
        assert (metrics.errors, metrics.timeouts) == (0, 0)
        assert ensemble._pool.killed == 0  # no worker had to be killed from outside
    assert eventually(marked_processes) == []


@pytest.mark.timeout(120)
def test_item_timeout_in_a_worker_tears_the_sandbox_down():
    """The ensemble's per-item bound (shorter than the program's own limit) fires inside the worker:
    counted as a timeout, and the program it interrupted is killed with its sandbox."""
    sleeper = fenced(SPAWN_SLEEPER)
    spec = [{"name": "code", "params": {"timeout": 60}, "timeout": 5}]
    with Ensemble.from_spec(spec, workers=1) as ensemble:
        result = ensemble.score([sleeper, fenced("print(7)")], tests=["assert True", [{"input": "", "output": "7"}]])
        assert result.values["code"] == [None, 1.0]
        assert result.metrics["code"].timeouts == 1
        assert eventually(marked_processes) == []


@pytest.mark.timeout(60)
def test_a_killed_owner_takes_its_sandbox_with_it(tmp_path):
    """What the worker pool's outer SIGKILL does to a worker: its sandbox dies too (--die-with-parent)."""
    import signal
    import subprocess
    import sys

    owner = subprocess.Popen(
        [sys.executable, "-c",
         "from reward_plugins.code.sandbox import Limits, Sandbox\n"
         "sandbox = Sandbox()\nsandbox.start()\nprint(flush=True)\n"
         f"sandbox.run({SPAWN_SLEEPER!r}, limits=Limits(timeout=100))"],
        stdout=subprocess.PIPE, cwd=Path(__file__).parent.parent,
    )
    owner.stdout.readline()
    deadline = time.monotonic() + 10
    while not marked_processes():
        assert time.monotonic() < deadline, "the program never started"
        time.sleep(0.05)
    os.kill(owner.pid, signal.SIGKILL)
    owner.wait()
    owner.stdout.close()
    assert eventually(marked_processes) == []


@pytest.mark.timeout(60)
def test_user_mode_rebuilds_after_its_server_is_killed():
    """In ``user`` mode (bwrap's own user namespace, as for a non-root user) programs share the server's uid,
    so killing it works; the host notices, scores the program as failed and starts a fresh sandbox."""
    from reward_plugins.code.sandbox import Sandbox

    with Sandbox(mode="user") as sandbox:
        assert sandbox.run("import os; print(os.getuid())").stdout == "65534\n"
        first = sandbox.processes()
        assert sandbox.run("import os\nos.kill(os.getppid(), 9)").status == "crashed"
        assert eventually(lambda: [p for p in first if os.path.exists(f"/proc/{p}")]) == []
        assert sandbox.run("print(input())", stdin="x" * 300_000).stdout == "x" * 300_000 + "\n"
        assert sandbox.starts == 2


LEAVE_STATE = """
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
assert libc.shmget(0x6772706F, 4096, 0o1666) >= 0, ctypes.get_errno()  # IPC_CREAT
with open('/dev/shm/left-behind', 'w') as f:
    f.write('answer')
with open('left-behind', 'w') as f:
    f.write('answer')
"""
FIND_STATE = """
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
assert libc.shmget(0x6772706F, 4096, 0o666) < 0, "System V segment survived"
assert not os.path.exists('/dev/shm/left-behind'), "/dev/shm file survived"
assert os.listdir('.') == [], os.listdir('.')
"""


@pytest.mark.timeout(60)
@pytest.mark.parametrize("mode", ["root", "user"])
def test_a_program_leaves_nothing_for_the_next_one(mode):
    """Programs share one warm sandbox: files, /dev/shm entries and System V IPC objects are removed between them."""
    from reward_plugins.code.sandbox import Sandbox

    if mode == "root" and os.geteuid() != 0:
        pytest.skip("root mode needs root")
    with Sandbox(mode=mode) as sandbox:
        assert sandbox.run(LEAVE_STATE, tests="assert True").passed_asserts
        assert sandbox.run(FIND_STATE, tests="assert True").passed_asserts
        assert sandbox.starts == 1  # cleaned up in place, not by rebuilding the sandbox
