"""Every language of the contest table judged through the reward: one accepted and one rejected real program each
(A+B over several lines), C++ dialects chosen by the fence tag, and the precompiled ``bits/stdc++.h``.

Real sandboxes, real toolchains (``scripts/system-deps.sh`` installs them); a language whose toolchain is missing
skips, naming the package to install.
"""

from __future__ import annotations

import time

import pytest

from grpo_host import get_reward
from reward_plugins.contest.judge import Case, Compile, Problem, Program, jail_for, judge
from reward_plugins.contest.languages import LANGUAGES, by_tag, missing, version
from reward_plugins.sandbox.bwrap import isolation

pytestmark = pytest.mark.skipif(isolation().mode != "root", reason=f"the contest judge needs the code sandbox in "
                                f"root mode: {isolation().mode} ({isolation().reason or 'not root'})")

TESTS = [{"input": "2\n1 2\n-5 40\n", "output": "3\n35\n"}, {"input": "1\n1000000000 1000000000\n",
                                                               "output": "2000000000\n"}]

# (fence tag, accepted program, rejected program, the rejected one's verdict: WA as a score of 0, or CE)
PROGRAMS = {
    "pypy3": ("pypy3", "n = int(input())\nfor _ in range(n):\n    a, b = map(int, input().split())\n    print(a + b)\n",
              "n = int(input())\nfor _ in range(n):\n    a, b = map(int, input().split())\n    print(a - b)\n", "WA"),
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
@pytest.mark.parametrize("name", ["cpp", "cpp20"])
def test_bits_stdcpp_is_read_precompiled_per_dialect(name):
    """g++ -H marks a precompiled header it used with ``!`` (and an unusable one with ``x``): each dialect's
    compile uses the sandbox's own build of ``bits/stdc++.h`` for its flags."""
    lang = LANGUAGES[name]
    source = f"#include <bits/stdc++.h>\n// {name} {time.time_ns()}\nint main(){{ std::puts(\"1\"); }}\n"
    program = Program(lang, source)
    jail = jail_for(frozenset({name}))
    argv = program.compile_argv()
    built = jail.compile(lang, program.files(), [*argv[:-3], "-H", "-Winvalid-pch", *argv[-3:]], Compile())
    assert built["status"] == "ok", built["log"]
    used = [line for line in built["log"].splitlines() if line.startswith(("!", "x"))]
    assert used and used[0].startswith("! ") and used[0].endswith("bits/stdc++.h.gch"), built["log"][:2000]
