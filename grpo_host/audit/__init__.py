"""``grpo-host audit``: try to game the chosen rewards on the real dataset before any GPU time is spent.

Two questions, asked through the same ensemble, policies and timeouts a run
would use (:mod:`~grpo_host.audit.run`): does each row's reference, laid out
the way the format rewards ask, earn full marks (a reward that cannot read
the data's answers pushes the policy away from them), and does any attack a
policy could find without knowing the answer earn more than an empty
completion (:mod:`~grpo_host.audit.library` and the packs' own probes,
:mod:`~grpo_host.audit.probes`)?  The rules that turn scores into findings
are in :mod:`~grpo_host.audit.verdict`.  A passing audit is not a proof of
safety: it shows only that these attacks fail on these rows.
"""

from __future__ import annotations

from .probes import Probe, Target, probe
from .run import DEFAULT_SAMPLE, TRAIN_SAMPLE, AuditFailed, audit_file, audit_rows, installed_probes
from .verdict import AuditReport, Finding, ProbeResult, RewardAudit, Scale, Thresholds

__all__ = [
    "DEFAULT_SAMPLE", "TRAIN_SAMPLE", "AuditFailed", "AuditReport", "Finding", "Probe", "ProbeResult", "RewardAudit", "Scale", "Target",
    "Thresholds", "audit_file", "audit_rows", "installed_probes", "probe",
]
