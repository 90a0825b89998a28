"""The sandbox machinery the ``code`` and ``contest`` packs share, with public names only; no pack of its own.

``bwrap`` builds a bubblewrap sandbox for a server of untrusted programs
(the mode this machine gives, the user namespace, the read-only files, the
argv, the environment allow-list, host uids, the keeper that ties the
sandbox's life to its owner's); ``primitives`` holds the standard-library
calls every server makes inside it (run as a script, it is the mode's
probe); ``seccomp`` the syscall filter every server loads; ``cgroup`` the
total memory and process bound over a whole sandbox; ``output`` how a
program's output compares with the expected one.  Each pack brings its own
server and its client.  The threat model is ``docs/sandbox.md``.
"""
