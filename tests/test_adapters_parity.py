"""The same 1,000 rows through ``grpo-host score`` and through every framework adapter, each called by its framework's
own code as that framework calls it (``tests/adapter_parity.py``): the same values, row for row, and the same rows
left unscored (a bad row, or a blank gold for ``accuracy``) in the form each framework reads as unscored."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from adapter_parity import (
    SPEC,
    rows,
    served_rows,
    via_atropos,
    via_eval_protocol_import,
    via_nemo_gym,
    via_openenv,
    via_openenv_environment,
    via_peer,
    via_score,
    via_skyrl,
)
from openenv_server import openenv_server
from peers import peer_python

sys.path.insert(0, str(Path(__file__).parent / "vendored"))  # NeMo Gym's schema (tests/vendored/nemo_gym_verify.py)

pytestmark = pytest.mark.slow  # 1,000 rows through six frameworks, two of them in venvs of their own, and a server


@pytest.fixture(scope="module")
def data() -> list[dict]:
    return rows(1000)


@pytest.fixture(scope="module")
def reference(data, tmp_path_factory) -> list[dict]:
    found = via_score(data, tmp_path_factory.mktemp("parity"))
    # the rows exercise every case: both rewards both ways, accuracy None, and bad rows
    assert {r["rewards"]["accuracy"] for r in found} == {0.0, 1.0, None}
    assert {r["rewards"]["r1_strict_format"] for r in found} == {0.0, 1.0, None}
    assert sum(r["total"] is None for r in found) == 10  # every 97th row has no gold
    return found


@pytest.fixture(scope="module")
def verify_url(tmp_path_factory):
    from test_serve import Server

    folder = tmp_path_factory.mktemp("parity-serve")
    srv = Server(folder, folder / "stderr.log", SPEC)
    yield srv.url
    srv.stop()


def same(found: list[dict], reference: list[dict]) -> None:
    assert len(found) == len(reference)
    wrong = [(i, f, r) for i, (f, r) in enumerate(zip(found, reference, strict=True)) if f != r]
    assert not wrong, f"{len(wrong)} rows differ, first: {wrong[:3]}"


def test_atropos(data, reference):
    same(via_atropos(data)[0], reference)


def test_openenv(data, reference):
    same(via_openenv(data)[0], reference)


def test_skyrl(data, reference):
    same(via_skyrl(data)[0], reference)


def test_nemo_gym_verify(data, reference, verify_url):
    same(via_nemo_gym(data, verify_url)[0], reference)


def test_eval_protocol(data, reference, tmp_path):
    same(via_peer("eval_protocol", peer_python("eval-protocol==0.3.33"), data, tmp_path)[0], reference)


def test_verifiers(data, reference, tmp_path):
    same(via_peer("verifiers", peer_python("verifiers==0.4.0"), data, tmp_path)[0], reference)


def test_openenv_environment(data, reference, tmp_path):
    """The import: a grpo-host agent's ``openenv`` environment stepping OpenEnv's own server of the spec.  The
    server's data check refuses the rows without a gold before it starts, naming the first; it serves the rest."""
    from grpo_host import UserError
    from grpo_host.integrations.openenv import environment_factory

    with pytest.raises(UserError, match=r"reward 'accuracy', column 'answer': missing in 10 rows \(first: row 97,"):
        environment_factory(SPEC, [{k: v for k, v in r.items() if k != "completion"} for r in data])
    with openenv_server(tmp_path, SPEC, served_rows(data)) as url:
        same(via_openenv_environment(data, url)[0], reference)


def test_eval_protocol_import(data, tmp_path):
    """The import: eval-protocol's own ``accuracy_reward`` as the grpo-host ``eval_protocol`` reward gives what
    eval-protocol's own call of it gives, row for row; a row without a gold is refused by the data check (None)
    where eval-protocol alone would call the function without one."""
    found = via_eval_protocol_import(peer_python("eval-protocol==0.3.33"), data, tmp_path)
    assert found["grpo_host"] == found["eval_protocol"]
    assert sum(v is None for v in found["grpo_host"]) == 10 and {0.0, 1.0} <= set(found["grpo_host"])
