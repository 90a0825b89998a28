#!/usr/bin/env bash
# The system packages the test suite uses besides Python's: bubblewrap (the code reward's sandbox),
# libseccomp2 (its seccomp filter), chromium (the report's browser test) and the contest reward's toolchains.
# Installed with apt-get where the machine has it and this user may (root, or sudo without a password); otherwise this says what is missing, and the isolation tests skip with that
# reason in pytest's summary.  Never fails: a machine without them can still run everything else.
set -u
need=()
command -v bwrap >/dev/null 2>&1 || need+=(bubblewrap)
{ ldconfig -p 2>/dev/null || /sbin/ldconfig -p 2>/dev/null; } | grep -q 'libseccomp\.so\.2' || need+=(libseccomp2)
# headless Chromium for the grpo-host report test (tests/test_report.py), which skips, naming why, without it
command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1 || need+=(chromium)
# compilers and runtimes for the contest reward (tests/test_contest_*.py), each language's tests skip without its own
for pair in gcc:gcc g++:g++ javac:default-jdk-headless node:nodejs rustc:rustc go:golang-go; do
  [ -x "/usr/bin/${pair%%:*}" ] || [ -x "/usr/local/bin/${pair%%:*}" ] || need+=("${pair#*:}")
done
[ ${#need[@]} -eq 0 ] && exit 0
if ! command -v apt-get >/dev/null 2>&1; then
  echo "system-deps: no apt-get here; install ${need[*]} with this system's package manager" >&2
  exit 0
fi
if [ "$(id -u)" = 0 ]; then
  sudo=()
elif sudo -n true 2>/dev/null; then
  sudo=(sudo)
else
  echo "system-deps: not root and no password-less sudo; install ${need[*]} (apt-get install ${need[*]})" >&2
  exit 0
fi
if ! { "${sudo[@]}" apt-get update -qq && "${sudo[@]}" apt-get install -y -qq "${need[@]}"; } >/dev/null; then
  echo "system-deps: could not install ${need[*]}" >&2
fi
exit 0
