"""Every language of the contest table judged through the reward: one accepted and one rejected real program each
(A+B over several lines), C++ dialects chosen by the fence tag, and the precompiled ``bits/stdc++.h``.

Real sandboxes, real toolchains (``scripts/system-deps.sh`` installs them); a language whose toolchain is missing
skips, naming the package to install.
"""

from __future__ import annotations

import dataclasses
import time

import pytest
from test_contest_languages_more import PROGRAMS as MORE

from grpo_host import get_reward
from reward_plugins.contest.judge import Case, Compile, Problem, Program, jail_for, judge
from reward_plugins.contest.languages import LANGUAGES, by_tag, missing, tool_paths, version
from reward_plugins.sandbox.bwrap import isolation

pytestmark = pytest.mark.skipif(isolation().mode != "root", reason=f"the contest judge needs the code sandbox in "
                                f"root mode: {isolation().mode} ({isolation().reason or 'not root'})")

TESTS = [{"input": "2\n1 2\n-5 40\n", "output": "3\n35\n"}, {"input": "1\n1000000000 1000000000\n",
                                                               "output": "2000000000\n"}]

# (fence tag, accepted program, rejected program, the rejected one's verdict: WA as a score of 0, or CE)
PROGRAMS = {
    "pypy3": ("pypy3", "n = int(input())\nfor _ in range(n):\n    a, b = map(int, input().split())\n    print(a + b)\n",
              "n = int(input())\nfor _ in range(n):\n    a, b = map(int, input().split())\n    print(a - b)\n", "WA"),
    "bash": ("bash", "read n\nfor ((i = 0; i < n; i++)); do read a b; echo $((a + b)); done\n",
             "read n\nfor ((i = 0; i < n; i++)); do read a b; echo $((a + b)); done\nfi\n", "CE"),
    "ruby": ("ruby", "gets.to_i.times { a, b = gets.split.map(&:to_i); puts a + b }\n",
             "gets.to_i.times { a, b = gets.split.map(&:to_i); puts a + b\n", "CE"),
    "php": ("php", "<?php\n$n = (int)trim(fgets(STDIN));\nfor ($i = 0; $i < $n; $i++) {\n"
                   "  [$a, $b] = array_map('intval', explode(' ', trim(fgets(STDIN))));\n  echo $a + $b, \"\\n\";\n}\n",
            "<?php\n$n = (int)trim(fgets(STDIN));\nfor ($i = 0; $i < $n; $i++) {\n  echo $n, \"\\n\";\n}\n", "WA"),
    "pascal": ("pascal", "program sum;\nvar n, i: longint; a, b: int64;\nbegin\n  readln(n);\n"
                         "  for i := 1 to n do begin readln(a, b); writeln(a + b); end;\nend.\n",
               "program sum;\nvar n, i: longint; a, b: int64;\nbegin\n  readln(n);\n"
               "  for i := 1 to n do begin readln(a, b); writeln(a + b) end\nend\n", "CE"),
    "csharp": ("csharp", "using System;\nclass Program {\n  static void Main() {\n"
                         "    int n = int.Parse(Console.ReadLine());\n    for (int i = 0; i < n; i++) {\n"
                         "      var p = Console.ReadLine().Split(' ');\n"
                         "      Console.WriteLine(long.Parse(p[0]) + long.Parse(p[1]));\n    }\n  }\n}\n",
               "using System;\nclass Program {\n  static void Main() {\n"
               "    int n = int.Parse(Console.ReadLine());\n    for (int i = 0; i < n; i++) {\n"
               "      var p = Console.ReadLine().Split(' ');\n"
               "      Console.WriteLine(long.Parse(p[0]) - long.Parse(p[1]));\n    }\n  }\n}\n", "WA"),
    "kotlin": ("kotlin", "fun main() {\n  val n = readLine()!!.trim().toInt()\n  repeat(n) {\n"
                         "    val (a, b) = readLine()!!.trim().split(\" \").map { it.toLong() }\n"
                         "    println(a + b)\n  }\n}\n",
               "fun main() {\n  val n = readLine()!!.trim().toInt()\n  repeat(n) {\n"
               "    val (a, b) = readLine()!!.trim().split(\" \").map { it.toLong() }\n"
               "    println(a + c)\n  }\n}\n", "CE"),
    "haskell": ("haskell", "main :: IO ()\nmain = do\n  n <- readLn :: IO Int\n"
                           "  mapM_ (\\_ -> getLine >>= print . sum . map (read :: String -> Integer) . words)"
                           " [1..n]\n",
                "main :: IO ()\nmain = do\n  n <- readLn :: IO Int\n"
                "  mapM_ (\\_ -> getLine >>= print . product . map (read :: String -> Integer) . words) [1..n]\n",
                "WA"),
}
PROGRAMS.update(MORE)  # the languages test_contest_languages_more.py adds, judged by the one test below
SLOW = {"kotlin", "haskell", "csharp"}  # their compilers start a JVM, Mono or GHC: seconds per program


def _needs(name: str) -> list:
    marks = [pytest.mark.skipif(bool(missing(LANGUAGES[name])), reason=str(missing(LANGUAGES[name])))]
    if name in SLOW:
        marks.append(pytest.mark.slow)  # the compiler alone takes several CPU seconds on a busy machine
    return marks


def _scored(tag: str, source: str):
    reward = get_reward("contest")
    return reward.fn(f"Here it is.\n```{tag}\n{source}```\n", params=reward.params(), tests=TESTS, time_limit=5.0,
                     memory_limit=256)


@pytest.mark.parametrize("name", [pytest.param(name, marks=_needs(name)) for name in PROGRAMS])
def test_each_language_accepts_a_right_program_and_rejects_a_wrong_one(name):
    tag, right, wrong, verdict = PROGRAMS[name]
    assert by_tag(tag) is LANGUAGES[name]
    accepted = _scored(tag, right)
    assert accepted.value == 1.0 and accepted.counts["ac"] == 2, accepted
    rejected = _scored(tag, wrong)
    assert rejected.value == 0.0 and rejected.counts[verdict.lower()] >= 1, rejected


HOGS = {  # each allocates far past a 64 MiB limit
    "pypy3": "a = []\nfor i in range(30_000_000):\n    a.append(i)\nprint(len(a))\n",
    "bash": "x=$(head -c 200000000 /dev/zero | tr '\\0' a)\necho ${#x}\n",
    "ruby": "a = Array.new(60_000_000) { |i| i }\nputs a.size\n",
    "php": "<?php\n$a = range(1, 30000000);\necho count($a), \"\\n\";\n",
    "pascal": "program h;\nvar a: array of int64; i: longint;\nbegin\n  setlength(a, 100000000);\n"
              "  for i := 0 to 99999999 do a[i] := i;\n  writeln(a[5]);\nend.\n",
    "csharp": "class P { static void Main() { var l = new System.Collections.Generic.List<long[]>();\n"
              "  for (int i = 0; i < 100000; i++) l.Add(new long[100000]); System.Console.WriteLine(l.Count); } }\n",
    "kotlin": "fun main() { val a = LongArray(100_000_000) { it.toLong() }; println(a[5]) }\n",
    "haskell": "import qualified Data.Map as M\n"
               "main = print (M.size (M.fromList [(i, i) | i <- [1..30000000 :: Int]]))\n",
}


@pytest.mark.parametrize("name", [pytest.param(name, marks=_needs(name)) for name in HOGS])
def test_each_runtime_past_its_memory_limit_is_mle(name):
    """RLIMIT_AS and the runtime's allowance (PyPy, Bash, Ruby, PHP, Pascal, C#) or its heap flag and the cgroup
    (Kotlin, Haskell) stop it, and its allocation failure reads as MLE, not RE."""
    problem = Problem((Case("", "x\n"),), time_limit=10.0, memory=64 << 20)
    report = judge(Program(LANGUAGES[name], HOGS[name]), problem, deadline=time.monotonic() + 300)
    assert report.verdicts == ["MLE"], (report.verdicts, report.details, report.compile_log[-500:])


@pytest.mark.slow  # kotlinc starts a JVM: several CPU seconds per program
@pytest.mark.skipif(bool(missing(LANGUAGES["kotlin"])), reason=str(missing(LANGUAGES["kotlin"])))
@pytest.mark.parametrize("source", [
    "object Main {\n  @JvmStatic fun main(args: Array<String>) { println(readLine()!!.trim().toInt() * 2) }\n}\n",
    "package contest.sol\n// fun main() {}\nclass Solver { companion object {\n"
    "  @JvmStatic fun main(args: Array<String>) { println(readLine()!!.trim().toInt() * 2) } } }\n",
    "@file:JvmName(\"Sol\")\nfun main(args: Array<String>) { println(readLine()!!.trim().toInt() * 2) }\n",
])
def test_kotlin_runs_the_class_that_declares_main(source):
    """DOMjudge detects the class with ``main`` (its ``kt`` script's DetectMain): an ``object``, a companion object's
    class, a file class renamed by ``@file:JvmName``, in a package."""
    report = judge(Program(LANGUAGES["kotlin"], source), Problem((Case("21\n", "42\n"),)),
                   deadline=time.monotonic() + 300)
    assert report.verdicts == ["AC"], (report.details, report.compile_log[-500:])


def test_a_toolchain_at_a_fixed_path_that_is_missing_names_its_path_and_package():
    absent = dataclasses.replace(LANGUAGES["csharp"], tools=("mono", "/nonexistent/mono/4.5/mcs.exe"))
    why = missing(absent)
    assert why and "/nonexistent/mono/4.5/mcs.exe" in why and "apt-get install mono-mcs" in why
    assert tool_paths(absent) is None and version(absent) is None


def test_every_language_has_a_version_probe_and_names_its_package():
    for lang in LANGUAGES.values():
        assert lang.version, lang.name
        assert lang.package, lang.name
        if missing(lang) is None:
            assert version(lang), lang.name


CPP20_ONLY = "#include <bits/stdc++.h>\nint main(){ std::vector<int> v{3, 1, 2}; std::ranges::sort(v);\n" \
             "  auto [a, b] = std::pair{v[0], v[2]}; if (std::has_single_bit(4u)) std::printf(\"%d %d\\n\", a, b); }\n"


@pytest.mark.skipif(bool(missing(LANGUAGES["cpp"])), reason=str(missing(LANGUAGES["cpp"])))
@pytest.mark.parametrize(("tag", "verdict"), [("c++20", "AC"), ("cpp20", "AC"), ("gnu++20", "AC"), ("c++14", "CE"),
                                              ("cpp14", "CE"), ("c++17", "CE"), ("cpp", "CE")])
def test_the_fence_tag_chooses_the_cpp_dialect(tag, verdict):
    lang = by_tag(tag)
    assert lang is not None
    problem = Problem((Case("", "1 3\n"),))
    report = judge(Program(lang, CPP20_ONLY), problem, deadline=time.monotonic() + 120)
    assert report.verdicts == [verdict], report.compile_log


@pytest.mark.skipif(bool(missing(LANGUAGES["cpp"])), reason=str(missing(LANGUAGES["cpp"])))
@pytest.mark.parametrize(("name", "header"), [("cpp", "bits/stdc++.h"), ("cpp", "iostream"),
                                              ("cpp20", "bits/stdc++.h")])
def test_system_headers_are_read_precompiled_per_dialect(name, header):
    """g++ -H marks a precompiled header it used with ``!`` (and an unusable one with ``x``): each dialect's
    compile uses the sandbox's own build of the header for its flags."""
    lang = LANGUAGES[name]
    source = f"#include <{header}>\n// {name} {time.time_ns()}\nint main(){{ return 0; }}\n"
    program = Program(lang, source)
    jail = jail_for(frozenset({name}))
    argv = program.compile_argv()
    built = jail.compile(lang, program.files(), [*argv[:-3], "-H", "-Winvalid-pch", *argv[-3:]], Compile(),
                         pch=program.pch())
    assert built["status"] == "ok", built["log"]
    used = [line for line in built["log"].splitlines() if line.startswith(("!", "x"))]
    assert used and used[0].startswith("! ") and used[0].endswith(f"{header}.gch"), built["log"][:2000]
    assert jail.pch_bytes > 0  # counted into the sandbox's memory bound


def test_another_dialect_or_compiler_gets_its_own_precompiled_headers():
    keys = {Program(LANGUAGES[name], "").pch()["key"] for name in ("cpp", "cpp14", "cpp20")
            if not missing(LANGUAGES[name])}
    assert len(keys) == 3 or missing(LANGUAGES["cpp"])
    assert Program(LANGUAGES["c"], "").pch() is None and "-I" not in Program(LANGUAGES["c"], "").compile_argv()


POISON = r"""
#include <cstdio>
#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>
#include <sys/stat.h>
#include <string>
int main() {
    const char *root = "/tmp/work/pch";
    DIR *d = opendir(root);
    if (!d) { std::puts("blocked"); return 0; }
    int seen = 0;
    while (dirent *e = readdir(d)) {
        if (e->d_name[0] == '.') continue;
        std::string f = std::string(root) + "/" + e->d_name;
        for (const char *name : {"/bits/stdc++.h.gch", "/iostream.gch"}) {
            std::string g = f + name;
            if (access(g.c_str(), R_OK) == 0) seen++;
            if (open(g.c_str(), O_WRONLY | O_TRUNC) >= 0) { std::puts("rewrote a header"); return 0; }
            if (unlink(g.c_str()) == 0 || rename(g.c_str(), (f + "/x").c_str()) == 0) { std::puts("moved"); return 0; }
            if (chmod(g.c_str(), 0666) == 0) { std::puts("chmod"); return 0; }
        }
        if (open((f + "/bits/vector.gch").c_str(), O_WRONLY | O_CREAT, 0644) >= 0) { std::puts("planted"); return 0; }
        if (mkdir((f + "/x").c_str(), 0755) == 0) { std::puts("planted a folder"); return 0; }
    }
    if (open("/tmp/work/pch/evil", O_WRONLY | O_CREAT, 0644) >= 0 || mkdir("/tmp/work/pch/evil", 0755) == 0) {
        std::puts("planted a key"); return 0;
    }
    std::puts(seen ? "blocked" : "no header to attack");
}
"""


@pytest.mark.skipif(bool(missing(LANGUAGES["cpp"])), reason=str(missing(LANGUAGES["cpp"])))
@pytest.mark.parametrize("writable", [False, True])
def test_a_program_cannot_poison_the_precompiled_headers(writable):
    """The headers are the server's, read-only to every program (also one whose row lets it write files); a later
    program still compiles against them and is judged as before."""
    problem = Problem((Case("", "blocked\n"),), writable=writable)
    assert judge(Program(LANGUAGES["cpp"], POISON), problem, deadline=time.monotonic() + 120).verdicts == ["AC"]
    after = Program(LANGUAGES["cpp"], f"#include <bits/stdc++.h>\n// {time.time_ns()}\nint main(){{ puts(\"1\"); }}\n")
    assert judge(after, Problem((Case("", "1\n"),)), deadline=time.monotonic() + 120).verdicts == ["AC"]


@pytest.mark.skipif(bool(missing(LANGUAGES["cpp"])), reason=str(missing(LANGUAGES["cpp"])))
def test_a_macro_that_changes_the_header_makes_g_plus_plus_read_the_header_itself():
    """``_GLIBCXX_DEBUG`` defined before ``bits/stdc++.h`` changes what the header declares: the precompiled one
    (built without it) must not be used, or the checked vector below would not stop the out-of-range read (RE)."""
    source = f"#define _GLIBCXX_DEBUG\n#include <bits/stdc++.h>\n// {time.time_ns()}\n" \
             "int main(){ std::vector<int> v(3); volatile int i = 5; std::printf(\"%d\\n\", v[i]); }\n"
    program = Program(LANGUAGES["cpp"], source)
    report = judge(program, Problem((Case("", "0\n"),)), deadline=time.monotonic() + 120)
    assert report.verdicts == ["RE"], report.details
    assert "-I" in program.compile_argv()  # the precompiled headers' folder was on the include path
