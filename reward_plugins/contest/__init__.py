"""The ``contest`` reward pack: competitive-programming judging (C, C++, Rust, Go, Java, JavaScript, Python).

``rewards`` holds the reward and its registration; ``rows`` maps dataset
rows (CodeContests, TACO, LiveCodeBench, plain columns) onto a problem;
``judge`` compiles and runs programs in the bubblewrap sandbox the code
pack uses too (:mod:`reward_plugins.sandbox`), with a server of its own
(``jail``, which runs inside it), with per-test CPU time and memory
limits, a content-addressed compile cache, built-in checkers and
testlib/Kattis special judges and interactors; ``languages`` says how each
language compiles and runs; ``packages`` reads Kattis packages and CMS tasks
into rows (``grpo-host data import``).  ``testlib/`` is the vendored
testlib.h (MIT).  How to use it and what it enforces: ``docs/contest.md``.
"""
