"""The ``python`` environment driven as the host drives it (its Session class), against a hostile policy.

Every program runs in the real ``code`` sandbox; where no sandbox can be
had here the sandboxed tests skip with the reason, as the sandbox suite
does, and the fail-closed test checks the environment refuses to start.
"""

from __future__ import annotations

import socket
import subprocess
import sys
import textwrap
import threading

import pytest
from conftest import clean_env

from grpo_host.discovery.plugins import load_plugins
from grpo_host.kinds.environment import Session, ToolError
from reward_plugins.code.sandbox import isolation

sandboxed = pytest.mark.skipif(not isolation().isolated,
                               reason=f"no bubblewrap sandbox here ({isolation().reason}): model code is not run")


@pytest.fixture(scope="module")
def python_env():
    """The built-in ``python`` environment, found through its entry point like any pack's."""
    return load_plugins(env={"GRPO_HOST_LOAD_PLUGINS": "python_tool"}).registry.environment("python")


def session(env, **params) -> Session:
    started = env.session_class()(params=params or None)
    assert started.reset(question="What is 2**100?", answer="1267650600228229401496703205376") is None
    return started


@sandboxed
def test_the_tool_runs_the_program_and_returns_what_it_prints(python_env):
    tool = session(python_env)
    assert tool.python(code="print(2**100)") == "1267650600228229401496703205376"
    assert tool.python(code="import sympy\nprint(sympy.factorint(360))") == "{2: 3, 3: 2, 5: 1}"
    assert tool.python(code="x = 3") == "[no output]"
    assert tool.python(code="print(x)").endswith("NameError: name 'x' is not defined\n[exit status 1]")  # fresh


@sandboxed
def test_a_failing_program_is_an_answer_with_its_traceback_and_status(python_env):
    out = session(python_env).python(code="import sys\nprint('partial')\nprint('warn', file=sys.stderr)\n1/0")
    assert out.startswith("partial\n[stderr]\nwarn\nTraceback")
    assert "ZeroDivisionError: division by zero" in out and out.endswith("[exit status 1]")


def test_the_tool_is_described_to_the_model_as_chat_templates_read_it(python_env):
    from transformers.utils import get_json_schema  # what TRL and chat templates read

    schema = get_json_schema(python_env.session_class().python)["function"]
    assert schema["name"] == "python"
    assert schema["parameters"]["properties"]["code"]["type"] == "string"
    assert schema["parameters"]["required"] == ["code"]


@pytest.fixture
def listener():
    """A TCP listener on the host's 127.0.0.1 that counts the connections it accepts."""
    server = socket.create_server(("127.0.0.1", 0))
    accepted = []

    def serve():
        while True:
            try:
                accepted.append(server.accept()[0])
            except OSError:
                return

    threading.Thread(target=serve, daemon=True).start()
    yield server.getsockname()[1], accepted
    server.close()


@sandboxed
@pytest.mark.slow
def test_a_hostile_policy_is_bounded_and_the_rollout_goes_on(python_env, listener, tmp_path):
    """Escapes (host files, the network, a fork bomb), floods and hangs: each answered, none takes the tool down."""
    port, accepted = listener
    secret = tmp_path / "secret.txt"
    secret.write_text("host secret 7f3a")
    tool = session(python_env, timeout=2, memory_mb=256)
    programs = {
        "host file": f"print(open({str(secret)!r}).read())",
        "etc": "import os\nprint(sorted(os.listdir('/etc')))\nprint(open('/etc/hostname').read())",
        "network": f"import socket\nsocket.create_connection(('127.0.0.1', {port}), timeout=1)\nprint('connected')",
        "fork bomb": "import os\nwhile True:\n    os.fork()",
        "memory": "b = bytearray(1 << 30)\nprint('allocated')",
        "flood": "while True:\n    print('x' * 4096)",
        "hang": "while True:\n    pass",
    }
    for what, code in programs.items():
        try:
            out = tool.python(code=code)
        except ToolError as exc:
            out = f"error: {exc}"
        assert "7f3a" not in out and "connected" not in out and "allocated" not in out, what
        if what in ("host file", "etc", "network", "memory"):
            assert out.endswith("[exit status 1]"), (what, out)
        if what == "flood":
            assert out == "error: tool python failed: ToolError: the program printed more than 1024 KiB and was stopped"
        if what == "hang":
            assert out == ("error: tool python failed: ToolError: the program used its 2 s of CPU "
                           "time without finishing and was stopped")
        assert tool.python(code="print('alive')") == "alive", what  # the next call is served, as fresh as the first
    assert accepted == []


@pytest.mark.parametrize(("arguments", "message"), [
    ({"code": "print(1)\n" + "#" * 70_000}, "over 65536"),
    ({"code": 123}, "argument 'code'"),
    ({"code": ["print(1)"]}, "argument 'code'"),
    ({}, r"missing arguments \['code'\]"),
    ({"code": "print(1)", "cwd": "/"}, r"unknown arguments \['cwd'\]"),
])
def test_a_bad_call_is_refused_before_anything_runs(python_env, arguments, message):
    tool = python_env.session_class()()
    with pytest.raises(ToolError, match=message):
        tool.python(**arguments)


@sandboxed
def test_a_long_result_is_cut_for_the_model(python_env):
    out = session(python_env).python(code="print('y' * 20_000)")
    assert out.startswith("y" * 8192) and out.endswith("more characters cut]")


def test_parameters_are_the_code_rewards_limits_and_bad_ones_name_the_environment(python_env):
    tool = python_env.session_class()(params={"timeout": 1.5, "memory_mb": 300})
    limits = tool.instance.limits
    assert (limits.timeout, limits.memory, limits.max_output) == (1.5, 300 << 20, 1024 << 10)
    with pytest.raises(ValueError, match="(?s)bad parameters for environment 'python'.*timeout"):
        python_env.session_class()(params={"timeout": 120})  # past the guard's bound: the call would be abandoned
    with pytest.raises(ValueError, match="(?s)bad parameters for environment 'python'.*memory"):
        python_env.session_class()(params={"memory": 1})


def test_without_a_sandbox_the_environment_refuses_to_start():
    """Fail closed, in a process of its own (the sandbox probe is made once per process): bwrap turned off."""
    script = textwrap.dedent("""
        from grpo_host.discovery.plugins import load_plugins
        env = load_plugins(env={"GRPO_HOST_LOAD_PLUGINS": "python_tool"}).registry.environment("python")
        try:
            env.session_class()()
        except ValueError as exc:
            print(exc)
        else:
            print("STARTED")
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120,
                          env=clean_env(GRPO_HOST_BWRAP="off"))
    assert "STARTED" not in done.stdout, done.stdout
    assert "bad parameters for environment 'python'" in done.stdout
    assert "the code reward refuses to run: no sandbox can isolate programs here" in done.stdout
