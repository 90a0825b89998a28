"""``grpo-host audit``: try to game the chosen rewards on the real dataset before any GPU time is spent.

Two questions, asked through the same ensemble, policies and timeouts a run
would use (:mod:`~grpo_host.audit.run`): does each row's reference, laid out
the way the format rewards ask, earn full marks (a reward that cannot read
the data's answers pushes the policy away from them), and does any attack a
policy could find without knowing the answer earn more than an empty
completion (:mod:`~grpo_host.audit.library` and the packs' own probes,
:mod:`~grpo_host.kinds.probe`)?  The rules that turn scores into findings
are in :mod:`~grpo_host.audit.verdict`.  A passing audit is not a proof of
safety: it shows only that these attacks fail on these rows.

Names are imported on first use (PEP 562): importing the package costs nothing until a name is used.
A pack declares its probes with :func:`grpo_host.probe` (:mod:`grpo_host.kinds.probe`), not from here.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .run import DEFAULT_SAMPLE, TRAIN_SAMPLE, audit_file, audit_rows, installed_probes
    from .verdict import AuditReport, Finding, ProbeResult, RewardAudit, Scale, Thresholds

_LAZY = {
    "DEFAULT_SAMPLE": "run", "TRAIN_SAMPLE": "run", "audit_file": "run", "audit_rows": "run",
    "installed_probes": "run",
    "AuditReport": "verdict", "Finding": "verdict", "ProbeResult": "verdict", "RewardAudit": "verdict",
    "Scale": "verdict", "Thresholds": "verdict",
}

__all__ = [
    "DEFAULT_SAMPLE", "TRAIN_SAMPLE", "AuditReport", "Finding", "ProbeResult", "RewardAudit", "Scale", "Thresholds",
    "audit_file", "audit_rows", "installed_probes",
]


def __getattr__(name: str):
    if name not in _LAZY:
        raise AttributeError(f"module 'grpo_host.audit' has no attribute {name!r}")
    value = globals()[name] = getattr(importlib.import_module(f".{_LAZY[name]}", __name__), name)
    return value
