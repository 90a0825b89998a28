"""Looking at a run after the fact: what every scored rollout was, a report of it, and scoring it again.

* :mod:`~grpo_host.runs.record`: every scored rollout of a run (or of ``score``) as Parquet, written as
  the run goes (``record: all | sample | off``), and read back.
* :mod:`~grpo_host.runs.output`: ``score --out``, checked first, written whole, resumable; the loop ``score`` runs.
* :mod:`~grpo_host.runs.report`: ``grpo-host report``, one self-contained HTML page of a run's record.
* :mod:`~grpo_host.runs.guard`: the check every command that writes makes first: not over what it reads, nor
  over a run's own files.
* :mod:`~grpo_host.runs.rescore`: ``grpo-host rescore``, a recorded run's rollouts scored by another spec.

This layer reads what the training and scoring layers wrote; only the backends and ``score`` import
it (to write the record and the output).  This ``__init__`` imports nothing.
"""
