"""Whose rules the contest judge follows where the reference judges differ from each other.

The judges agree on most verdicts; where they do not, the difference is a
policy of the judge, written in its own source, not a bug of one of them.
:data:`RULES` is the one table of those policies, one :class:`Rules` per
judge, each field citing the judge's source (read at DOMjudge ``a023fd3e``,
DMOJ judge-server ``3ea44aca``, problemtools ``a185fe97``).  The default,
``kattis``, is the judge's behaviour before the table existed.

Every policy applies inside the same sandbox with the same guarantees: an
unlimited stack is still bounded by ``RLIMIT_AS`` (native programs) and the
sandbox's cgroup (every program); output that is thrown away past the cap is
read by the sandbox's server, never written anywhere.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["RULES", "Rules"]


@dataclass(frozen=True)
class Rules:
    name: str
    truncate_output: bool
    """Output past the cap is thrown away and the program runs on (to its time limit: a program that writes
    forever is TLE, one that ends is OLE).  DOMjudge: ``judge/runguard.cc`` reads the program's stdout and stderr
    through pipes and, at ``--streamsize``, "Throw away data if we're at the output limit, but still count how much
    data we consumed", and ``judgedaemon.main.php`` ``determineVerdict`` checks the time limit, then the exit code,
    then ``output-truncated`` (OUTPUT-LIMIT).  False: the program is stopped at the cap (``RLIMIT_FSIZE``), OLE, as
    DMOJ's ``dmoj/utils/communicate.py`` does (``proc.mark_ole()`` and ``OutputLimitExceeded`` at the limit) and
    problemtools' output file limit."""
    unlimited_stack: bool
    """``RLIMIT_STACK`` unlimited, so glibc gives threads its default 2 MiB stack: DOMjudge's ``runguard.cc``
    ("Always set the stack size to be unlimited"), DMOJ's ``dmoj/cptbox/helper.cpp``
    (``setrlimit2(RLIMIT_STACK, RLIM_INFINITY)``).  The memory limit still bounds it (``RLIMIT_AS``, the cgroup).
    False: the stack is the memory limit (at most 1 GiB), as Kattis contests document its judge (NWERC's system page,
    https://2020.nwerc.eu/system: "For C, C++, and Python, the heap and stack sizes are limited only by the total
    amount of memory available in the sandbox"); problemtools' ``run/program.py``, Kattis's tool for local runs,
    sets it unlimited."""
    java_public_class: bool
    """A Java program needs a ``public class``, which is the class run; without one it is a compile error.  DMOJ:
    ``dmoj/executors/java_executor.py`` ``find_class`` ("No public class: your main class must be declared as a
    \\"public class\\"").  False: the class that declares ``main`` runs, public or not (DOMjudge's
    ``java_javac_detect``, problemtools' Java language)."""
    wall: tuple[float, float, float]
    """(factor, seconds, share): a program is stopped, TLE, when its wall clock reaches factor × its time limit +
    max(seconds, share × its time limit), for one that sleeps or blocks (its CPU time decides otherwise).  DOMjudge
    (1, 1, 0.1): ``judgedaemon.main.php`` kills at ``time_limit + overshoot_time(time_limit, overshoot)``, the
    default ``timelimit_overshoot`` ``1s|10%`` (``etc/db-config.yaml``); DMOJ (3, 0, 0): ``dmoj/problem.py``
    ``wall_time_factor: 3``; Kattis (2, 1, 0): twice the limit plus a second, this judge's own bound before the
    table (problemtools limits CPU time only).  The wall clock is the one of
    :class:`reward_plugins.contest.jail.Awake` under every rule: the seconds the program's processes waited for a
    CPU do not count, so a busy machine changes no verdict."""

    def wall_limit(self, seconds: float) -> float:
        """The wall-clock bound of a program whose time limit is ``seconds``."""
        factor, extra, share = self.wall
        return factor * seconds + max(extra, share * seconds)


RULES: dict[str, Rules] = {rules.name: rules for rules in (
    Rules("kattis", truncate_output=False, unlimited_stack=False, java_public_class=False, wall=(2.0, 1.0, 0.0)),
    Rules("domjudge", truncate_output=True, unlimited_stack=True, java_public_class=False, wall=(1.0, 1.0, 0.1)),
    Rules("dmoj", truncate_output=False, unlimited_stack=True, java_public_class=True, wall=(3.0, 0.0, 0.0)),
)}
