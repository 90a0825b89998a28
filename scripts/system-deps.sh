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
# the contest reward's further languages (reward_plugins/contest/languages.py), without recommended packages; on
# Debian 12, download / installed size: pypy3 13 / 77 MB, ruby 7 / 28 MB, php-cli 3 / 16 MB, fp-compiler (Pascal)
# 9 / 64 MB, mono-mcs (C#, with mono-runtime) 7 / 25 MB: about 39 MB to download in all.  Kotlin (kotlin: 87 / 355
# MB) and Haskell (ghc: 73 / 795 MB, the largest toolchain here by far, and its tests compile for seconds each)
# only with SYSTEM_DEPS_HEAVY=1: their tests skip, naming the package, without them.  Bash and the coreutils, grep,
# sed and awk its programs run are in every Debian; bc (0.1 MB) is not always.  DOMjudge's further languages,
# installed size with their dependencies on Debian 12: gawk (AWK) 3 MB, perl (its modules and libperl beside perl-base) 47 MB,
# lua5.4 0.5 MB, swi-prolog-nox (Prolog) 15 MB, gfortran 43 MB, r-base-core (R, with BLAS and LAPACK) 50 MB, sbcl (Common Lisp) 59 MB; OCaml
# (ocaml-nox: 437 MB with its compiler libraries) and Ada (gnat: 99 MB) only with SYSTEM_DEPS_HEAVY=1.
lean=()
langs="pypy3:pypy3 ruby:ruby php:php-cli fpc:fp-compiler /usr/lib/mono/4.5/mcs.exe:mono-mcs bc:bc gawk:gawk"
langs="$langs /usr/share/perl:perl lua5.4:lua5.4 swipl:swi-prolog-nox gfortran:gfortran /usr/lib/R/bin/exec/R:r-base-core sbcl:sbcl"
[ "${SYSTEM_DEPS_HEAVY:-0}" = 1 ] && langs="$langs kotlinc:kotlin ghc:ghc ocamlopt:ocaml-nox gnatmake:gnat"
for pair in $langs; do
  tool=${pair%%:*}
  case $tool in /*) [ -e "$tool" ] ;; *) [ -x "/usr/bin/$tool" ] || [ -x "/usr/local/bin/$tool" ] ;; esac \
    || lean+=("${pair#*:}")
done
[ ${#need[@]} -eq 0 ] && [ ${#lean[@]} -eq 0 ] && exit 0
if ! command -v apt-get >/dev/null 2>&1; then
  echo "system-deps: no apt-get here; install ${need[*]} ${lean[*]} with this system's package manager" >&2
  exit 0
fi
if [ "$(id -u)" = 0 ]; then
  sudo=()
elif sudo -n true 2>/dev/null; then
  sudo=(sudo)
else
  echo "system-deps: not root and no password-less sudo; install ${need[*]} ${lean[*]} (apt-get install" \
    "${need[*]} ${lean[*]})" >&2
  exit 0
fi
"${sudo[@]}" apt-get update -qq >/dev/null || echo "system-deps: apt-get update failed" >&2
if [ ${#need[@]} -gt 0 ] && ! "${sudo[@]}" apt-get install -y -qq "${need[@]}" >/dev/null; then
  echo "system-deps: could not install ${need[*]}" >&2
fi
if [ ${#lean[@]} -gt 0 ] && ! "${sudo[@]}" apt-get install -y -qq --no-install-recommends "${lean[@]}" >/dev/null; then
  echo "system-deps: could not install ${lean[*]}" >&2
fi
exit 0
