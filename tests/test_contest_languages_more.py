"""The languages DOMjudge runs beyond the big judges' common set (AWK, Perl, Lua, Fortran, Prolog, OCaml, R, Ada) and
Common Lisp (Kattis's, as DOMjudge has none), each
DOMjudge's default compile script runs it, in the same sandbox as every other language.

DOMjudge's example problem ``hello`` (``tests/data/contest/domjudge/hello``, GPL-2.0, ``SOURCE.md``) is imported with
``grpo-host``'s Kattis importer and its one-file submissions in these languages judged against their
``@EXPECTED_RESULTS@`` tags; then an accepted and a rejected A+B per language through the reward, and what each
language's sandbox lets a program reach.  Real sandboxes, real toolchains (``scripts/system-deps.sh`` installs them);
a language whose toolchain is missing skips, naming the package to install.
"""

from __future__ import annotations

import os
import re
import time
from pathlib import Path

import pytest

from reward_plugins.contest.judge import Case, Problem, Program, judge
from reward_plugins.contest.languages import LANGUAGES, binds, missing, version
from reward_plugins.contest.packages import kattis
from reward_plugins.contest.rows import problem_from_row
from reward_plugins.sandbox.bwrap import isolation

HELLO = Path(__file__).parent / "data" / "contest" / "domjudge" / "hello"
VERDICTS = {"CORRECT": "AC", "WRONG-ANSWER": "WA", "RUN_TIME_ERROR": "RE", "COMPILER-ERROR": "CE"}
DEFAULTS = {"time_limit": 1.0, "memory_mb": 256, "output_mb": 16, "compare": "token", "float_tolerance": 1e-6}
SUFFIXES = {".awk": "awk", ".pl": "perl", ".lua": "lua", ".f95": "fortran", ".plg": "prolog", ".ml": "ocaml", ".R": "r",
            ".adb": "ada", ".lisp": "lisp"}
"""DOMjudge's extensions for the languages added here (its ``LanguageFixture``), by our table's name."""

pytestmark = pytest.mark.skipif(isolation().mode != "root", reason=f"the contest judge needs the code sandbox in "
                                f"root mode: {isolation().mode} ({isolation().reason or 'not root'})")


def _needs(name: str) -> list:
    return [pytest.mark.skipif(bool(missing(LANGUAGES[name])), reason=str(missing(LANGUAGES[name])))]


FOLDERS = {"accepted": "AC", "wrong_answer": "WA", "run_time_error": "RE", "compiler_error": "CE"}


def _expected(path: Path) -> str:
    """The submission's ``@EXPECTED_RESULTS@`` tag, else its folder's verdict (as DOMjudge reads them)."""
    tag = re.search(r"@EXPECTED_RESULTS@: (\S+)", path.read_text())
    if tag is None:
        return FOLDERS[path.relative_to(HELLO / "submissions").parts[0]]
    return VERDICTS[tag.group(1).split(",")[0]]


def submissions() -> list:
    return [pytest.param(path, SUFFIXES[path.suffix], id=str(path.relative_to(HELLO / "submissions")),
                         marks=_needs(SUFFIXES[path.suffix]))
            for path in sorted((HELLO / "submissions").rglob("*")) if path.suffix in SUFFIXES]


@pytest.mark.parametrize(("path", "name"), submissions())
def test_domjudges_hello_submissions_get_its_verdicts(path, name):
    """Compared as DOMjudge's default validator compares (Kattis's: case-insensitive where ``problem.yaml`` does not
    say ``case_sensitive``; its R hello prints ``Hello World!``), as the importer's row says."""
    problem = problem_from_row(kattis(HELLO), **DEFAULTS)
    report = judge(Program(LANGUAGES[name], path.read_text()), problem, deadline=time.monotonic() + 60)
    assert report.verdicts == [_expected(path)], (report.details, report.compile_log[-300:])


TESTS = [{"input": "2\n1 2\n-5 40\n", "output": "3\n35\n"}, {"input": "1\n1000000000 1000000000\n",
                                                               "output": "2000000000\n"}]

FORTRAN = "program ab\n  integer :: n, i\n  integer(8) :: a, b\n  read(*, *) n\n  do i = 1, n\n    read(*, *) a, b\n" \
          "    write(*, '(I0)') %s\n  end do\nend program ab\n"
PROLOG = "%s :- read_line_to_string(user_input, L), number_string(N, L),\n  forall(between(1, N, _), (\n" \
         "    read_line_to_string(user_input, S), split_string(S, \" \", \" \", [A, B]),\n" \
         "    number_string(X, A), number_string(Y, B), Z is X + Y, writeln(Z))).\n"
OCAML = "let () =\n  let n = Scanf.scanf \" %%d\" (fun x -> x) in\n  for _ = 1 to n do\n" \
        "    Scanf.scanf \" %%d %%d\" (fun a b -> print_int (%s); print_newline ())\n  done\n"
R = "con <- file('stdin', 'r')\nn <- as.integer(readLines(con, 1))\nfor (i in seq_len(n)) {\n" \
    "  v <- as.numeric(strsplit(readLines(con, 1), ' ')[[1]])\n" \
    "  cat(format(v[1] + v[2], scientific = FALSE), '\\n', sep = ''%s\n}\n"
ADA = "with Ada.Text_IO; use Ada.Text_IO;\nwith Ada.Long_Long_Integer_Text_IO; use Ada.Long_Long_Integer_Text_IO;\n" \
      "procedure Main is\n   N, A, B : Long_Long_Integer;\nbegin\n   Get (N);\n   for I in 1 .. N loop\n" \
      "      Get (A);\n      Get (B);\n      Put (%s, Width => 0);\n      New_Line;\n   end loop;\nend Main;\n"
LISP = "(let ((n (read)))\n  (dotimes (i n)\n    (let ((a (read)) (b (read)))\n      (format t \"~D~%%\" (+ a b))))%s\n"

# (fence tag, accepted program, rejected program, the rejected one's verdict: WA as a score of 0, or CE): judged by
# test_contest_languages.py's test_each_language_accepts_a_right_program_and_rejects_a_wrong_one, with its own
PROGRAMS = {
    "awk": ("awk", "NR > 1 { print $1 + $2 }\n", "NR > 1 { print $1 - $2 }\n", "WA"),
    "perl": ("perl", "my $n = <STDIN>;\nfor (1 .. $n) { my ($a, $b) = split ' ', <STDIN>; print $a + $b, \"\\n\"; }\n",
             "my $n = <STDIN>;\nfor (1 .. $n) { my ($a, $b) = split ' ', <STDIN>; print $a + $b, \"\\n\";\n", "CE"),
    "lua": ("lua", "local n = io.read('n')\nfor _ = 1, n do\n  local a, b = io.read('n', 'n')\n  print(a + b)\nend\n",
            "local n = io.read('n')\nfor _ = 1, n do\n  local a, b = io.read('n', 'n')\n  print(a + b)\n", "CE"),
    "fortran": ("fortran", FORTRAN % "a + b", FORTRAN % "a - b", "WA"),
    "prolog": ("prolog", PROLOG % "main", PROLOG % "solve", "CE"),  # no main/0: DOMjudge's compile.plg refuses it
    "ocaml": ("ocaml", OCAML % "a + b", OCAML % "a +. b", "CE"),
    "r": ("r", R % ")", R % "", "CE"),  # a missing parenthesis: R's parse() fails
    "ada": ("ada", ADA % "A + B", ADA % "A - B", "WA"),
    "lisp": ("lisp", LISP % ")", LISP % "", "CE"),  # an unclosed form: compile-file fails
}




@pytest.mark.parametrize(("name", "first"), [("awk", "GNU Awk"), ("perl", "This is perl 5"), ("lua", "Lua 5."),
                                           ("fortran", "GNU Fortran"), ("prolog", "SWI-Prolog version"),
                                           ("ocaml", "4."), ("r", "R version 4."),
                                           ("ada", "GNATMAKE"), ("lisp", "SBCL 2.")])
def test_each_language_reports_its_version(name, first):
    if missing(LANGUAGES[name]):
        pytest.skip(str(missing(LANGUAGES[name])))
    assert (version(LANGUAGES[name]) or "").startswith(first)


OTHERS = ("/usr/bin/python3", "/usr/bin/perl", "/usr/bin/gawk", "/usr/bin/mawk", "/usr/bin/lua5.4", "/usr/bin/bash",
          "/bin/sh", "/usr/bin/dash", "/usr/bin/ruby", "/usr/bin/gcc", "/usr/bin/env", "/usr/bin/chroot")
"""Interpreters, shells and tools a host has; a program reaches only its own language's (the program prints
``reached <path>`` for each one it can open)."""
OWN = {"awk": ("/usr/bin/gawk",), "perl": ("/usr/bin/perl",), "lua": ("/usr/bin/lua5.4",), "ocaml": ("/bin/sh",),
       "r": ("/bin/sh", "/usr/bin/env", os.path.realpath("/usr/bin/awk"))}
"""What of :data:`OTHERS` each language's sandbox has (its interpreter; OCaml's and R's shell, and the shell tools R
calls, ``awk`` as the system's alternative names it), as ``docs/contest.md`` lists them; nothing for the others."""
REACH = {
    "awk": "BEGIN { n = split(\"%s\", p, \" \"); for (i = 1; i <= n; i++) "
           "if ((getline line < p[i]) >= 0) print \"reached \" p[i]; print \"done\" }\n",
    "perl": "for (split ' ', '%s') { print \"reached $_\\n\" if -e $_ }\nopendir(my $d, '/usr/bin') or die;\n"
            "print 'done ', scalar(grep { !/^\\./ } readdir $d), \"\\n\";\n",
    "lua": "for p in ('%s'):gmatch('%%S+') do local f = io.open(p) if f then print('reached ' .. p) f:close() end end\n"
           "print('done')\n",
    "fortran": "program r\n  logical :: e\n%s  write(*, '(A)') 'done'\nend program r\n",
    "lisp": "(dolist (p '(%s)) (when (probe-file p) (format t \"reached ~A~%%\" p)))\n(format t \"done~%%\")\n",
    "ada": "with Ada.Text_IO; with Ada.Directories;\nprocedure Main is\nbegin\n%s   Ada.Text_IO.Put_Line (\"done\");\n"
           "end Main;\n",
    "prolog": "main :- split_string(\"%s\", \" \", \"\", Ps),\n"
              "  forall((member(P, Ps), exists_file(P)), format(\"reached ~w~n\", [P])), writeln(done).\n",
    "ocaml": "let () = List.iter (fun p -> if Sys.file_exists p then print_endline (\"reached \" ^ p))\n"
             "  (String.split_on_char ' ' \"%s\"); print_endline \"done\"\n",
    "r": "for (p in strsplit('%s', ' ')[[1]]) if (file.exists(p)) cat(paste0('reached ', p, '\\n'))\ncat('done\\n')\n",
}


@pytest.mark.parametrize("name", [pytest.param(name, marks=_needs(name)) for name in REACH])
def test_a_program_reaches_its_own_interpreter_and_no_other(name):
    """What the jail binds for the language is the language's own toolchain: the program sees what :data:`OWN` names
    for it and nothing else of :data:`OTHERS` (Perl also lists ``/usr/bin``: only what :func:`binds` names there)."""
    lang = LANGUAGES[name]
    expected = "".join(f"reached {path}\n" for path in OTHERS if path in OWN.get(name, ()) and os.path.exists(path))
    done = "done\n"
    if name == "perl":
        done = f"done {len([path for path in binds(lang) if path.startswith('/usr/bin/')])}\n"
    problem = Problem((Case("", expected + done),), compare="exact")
    paths = " ".join(OTHERS)  # Fortran and Ada split no string here: a test per path
    if name == "fortran":
        paths = "".join(f"  inquire(file='{p}', exist=e)\n  if (e) write(*, '(A)') 'reached {p}'\n" for p in OTHERS)
    if name == "lisp":
        paths = " ".join(f'"{p}"' for p in OTHERS)
    if name == "ada":
        paths = "".join(f"   if Ada.Directories.Exists (\"{p}\") then Ada.Text_IO.Put_Line (\"reached {p}\"); end if;\n"
                        for p in OTHERS)
    report = judge(Program(lang, REACH[name] % paths), problem, deadline=time.monotonic() + 60)
    assert report.verdicts == ["AC"], (report.details, report.compile_log[-300:])


HOGS = {  # each allocates far past a 64 MiB limit
    "awk": "BEGIN { for (i = 0; i < 30000000; i++) a[i] = i; print length(a) }\n",
    "perl": "my $n = 30000000; my @a = (1 .. $n); print scalar(@a), \"\\n\";\n",
    "lua": "local t = {}\nfor i = 1, 30000000 do t[i] = i end\nprint(#t)\n",
    "fortran": "program h\n  integer(8), allocatable :: a(:)\n  integer :: i\n  allocate(a(100000000))\n"
               "  do i = 1, 100000000\n    a(i) = i\n  end do\n  write(*, '(I0)') a(5)\nend program h\n",
    "prolog": "main :- numlist(1, 30000000, L), length(L, N), writeln(N).\n",
    "ocaml": "let () = let a = Array.init 100_000_000 (fun i -> i) in print_int a.(5)\n",
    "r": "x <- numeric(1e8) + 1\ncat(length(x), '\\n')\n",
    "ada": "with Ada.Text_IO;\nprocedure Main is\n   type Arr is array (Positive range <>) of Long_Long_Integer;\n"
           "   type Acc is access Arr;\n   A : Acc := new Arr (1 .. 100_000_000);\nbegin\n"
           "   for I in A'Range loop A (I) := Long_Long_Integer (I); end loop;\n"
           "   Ada.Text_IO.Put_Line (Long_Long_Integer'Image (A (5)));\nend Main;\n",
    "lisp": "(let ((a (make-array 100000000 :element-type 'fixnum :initial-element 1))) (print (aref a 5)))\n",
}


@pytest.mark.parametrize("name", [pytest.param(name, marks=_needs(name)) for name in HOGS])
def test_each_runtime_past_its_memory_limit_is_mle_and_a_small_program_under_it_is_not(name):
    """RLIMIT_AS at the limit and the runtime's allowance stop it, and its runtime's own word for a failed allocation
    (``Language.oom_signs``: Lua's ``not enough memory``, OCaml's ``Out_of_memory``, ...) reads as MLE, not RE; the
    accepted A+B under the same limit is AC (the allowance lets the runtime start)."""
    problem = Problem((Case("", "x\n"),), time_limit=10.0, memory=64 << 20)
    report = judge(Program(LANGUAGES[name], HOGS[name]), problem, deadline=time.monotonic() + 300)
    assert report.verdicts == ["MLE"], (report.verdicts, report.details, report.compile_log[-500:])
    small = Problem(tuple(Case(t["input"], t["output"]) for t in TESTS), memory=64 << 20)
    assert judge(Program(LANGUAGES[name], PROGRAMS[name][1]), small, deadline=time.monotonic() + 300).verdicts == \
        ["AC", "AC"]
