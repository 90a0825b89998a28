"""The contest judge's verdicts follow the reference judges' rules (issue 37), each class with instances compiled and
run in the real sandbox.

* Java: the file is named for the public class whatever its modifiers or alphabet, and the program runs the class
  that declares ``main``, public or not (DOMjudge's ``java_javac_detect``); a class spelled in a comment or a string
  is no class; a ``package`` declaration is a compile error (DMOJ).
* Go: a package other than ``main`` is a compile error (``go build`` made an archive, which then could not start:
  a judge error before).
* A source or class file name longer than the file system allows is a compile error, not a judge error.
* The float comparison reads numbers as C does and NaN and infinities as DOMjudge's compare does.
* Where the judges differ from each other, the ``rules`` parameter picks whose policy applies
  (:mod:`reward_plugins.contest.rules`): output past the cap stopped (Kattis, DMOJ: OLE) or thrown away while the
  program runs on (DOMjudge: a flood is TLE), the stack the memory limit (Kattis) or unlimited under it (DOMjudge,
  DMOJ), Java's class with ``main`` run public or not (Kattis, DOMjudge) or a public class required (DMOJ), the
  wall clock at which a program that sleeps is stopped.
"""

from __future__ import annotations

import math
import time

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import ValidationError

from grpo_host import get_reward
from reward_plugins.contest.judge import MIB, Case, Problem, Program, c_float, judge, token_match
from reward_plugins.contest.languages import LANGUAGES, java_entry, missing
from reward_plugins.contest.rules import RULES
from reward_plugins.sandbox.bwrap import isolation

pytestmark = pytest.mark.skipif(isolation().mode != "root", reason=f"the contest judge needs the code sandbox in "
                                f"root mode: {isolation().mode} ({isolation().reason or 'not root'})")

ECHO = Problem((Case("3 4\n", "7\n"), Case("10 -2\n", "8\n")), time_limit=4.0)
JAVA_BODY = """ {
    public static void main(String[] args) {
        java.util.Scanner in = new java.util.Scanner(System.in);
        System.out.println(in.nextLong() + in.nextLong());
    }
}
"""


def _first(language: str, source: str, problem: Problem = ECHO, rules: str = "kattis") -> tuple[str, str]:
    if why := missing(LANGUAGES[language]):
        pytest.skip(why)
    report = judge(Program(LANGUAGES[language], source), problem, deadline=time.monotonic() + 120,
                   rules=RULES[rules])
    return next((v for v in report.verdicts if v != "AC"), "AC"), report.compile_log[-400:]


@pytest.mark.parametrize("header", [
    "public final strictfp class Sum",  # modifiers after public that the old pattern did not list
    "public strictfp class Sum",
    "public abstract sealed class Sum permits Sum.Leaf",  # sealed needs its permitted subclass: below
    "public /* the real one */ class Sum",
    "@SuppressWarnings(\"unused\")\npublic\nfinal class\tSum",
])
def test_java_public_class_is_found_with_any_modifier(header):
    extra = "\n    static final class Leaf extends Sum {}\n" if "sealed" in header else ""
    source = f"import java.util.*;\n{header}" + JAVA_BODY.replace("{\n", "{" + extra, 1)
    assert java_entry(source)[:2] == ("Sum", "Sum")
    verdict, log = _first("java", source)
    assert verdict == "AC", log


@pytest.mark.parametrize("name", ["Ärger", "Решение", "数和", "_$x"])
def test_java_class_names_in_any_alphabet(name):
    source = f"public class {name}" + JAVA_BODY
    assert java_entry(source)[:2] == (name, name)
    verdict, log = _first("java", source)
    assert verdict == "AC", log


@pytest.mark.parametrize("source", [
    "class Solution" + JAVA_BODY,  # no public class: the file may have any name, the class with main runs
    "class Helper { static int twice(int x) { return 2 * x; } }\nfinal class Sol" + JAVA_BODY,
    "public class Shell { }\nclass Runner" + JAVA_BODY,  # file named for the public class, run from another
    "interface Solution" + JAVA_BODY,  # an interface's static main runs too
    "enum Solution { ONE;" + JAVA_BODY.lstrip(" {"),
])
def test_java_runs_the_class_that_has_main_public_or_not(source):
    verdict, log = _first("java", source)
    assert verdict == "AC", log


@pytest.mark.parametrize("decoy", [
    "// public class Decoy\n",
    "/* public class Decoy { public static void main(String[] a) {} } */\n",
    'class Text { String s = "public class Decoy { public static void main(String[] a) {} }"; }\n',
    'class Text { String s = """\n    public class Decoy {}\n    """; }\n',
])
def test_java_class_spelled_in_a_comment_or_string_is_no_class(decoy):
    source = decoy + "public class Real" + JAVA_BODY
    assert java_entry(source)[:2] == ("Real", "Real")
    verdict, log = _first("java", source)
    assert verdict == "AC", log


@pytest.mark.parametrize("package", ["bin", "com.example.sol", "/* here */ p"])
def test_java_package_declaration_is_a_compile_error(package):
    """DMOJ's ``java8_ce_with_package``: CE (DOMjudge allows CE); the run, from the unnamed package, could not
    find the class (a run-time error before)."""
    verdict, log = _first("java", f"package {package};\n\nclass Main" + JAVA_BODY)
    assert verdict == "CE", log
    assert "package" in log


@pytest.mark.parametrize("package", ["solution", "main_test", "Main"])
def test_go_package_other_than_main_is_a_compile_error(package):
    source = f"package {package}\n\nimport \"fmt\"\n\nfunc main() {{\n\tvar a, b int\n\tfmt.Scan(&a, &b)\n" \
             "\tfmt.Println(a + b)\n}\n"
    verdict, log = _first("go", source)
    assert verdict == "CE", log
    assert _first("go", source.replace(f"package {package}", "package main"))[0] == "AC"


@pytest.mark.parametrize("length", [250, 251, 260, 1000])
def test_an_overlong_file_name_is_a_compile_error(length):
    """A class whose name makes ``<name>.java`` or ``<name>.class`` longer than 255 bytes cannot be written: CE
    (javac's own answer for the class file), never a judge error (the sandbox failing to write the source)."""
    source = f"public class {'Q' * length}" + JAVA_BODY
    verdict, log = _first("java", source)
    assert verdict == "CE", log
    wide = f"public class {'Ä' * (length // 2)}" + JAVA_BODY  # two bytes a letter: the limit is in bytes
    assert _first("java", wide)[0] == "CE"


def _prints(language: str, text: str) -> str:
    """A program in ``language`` that prints ``text``, an expression of that language."""
    return {
        "java": f"class P {{ public static void main(String[] a) {{ System.out.println({text}); }} }}\n",
        "cpp": f"#include <cstdio>\n#include <cmath>\nint main() {{ std::printf(\"%f\\n\", {text}); }}\n",
        "python": f"print({text})\n",
        "go": f"package main\n\nimport (\n\t\"fmt\"\n\t\"math\"\n)\n\nfunc main() {{ fmt.Println({text}) }}\n",
    }[language]


@pytest.mark.parametrize(("language", "text", "answer", "expected"), [
    ("java", "Double.NaN", "nan", "AC"),  # Java writes NaN, C nan, glibc -nan for a negative one: all NaN
    ("cpp", "-NAN", "NaN", "AC"),
    ("go", "math.NaN()", "-nan", "AC"),
    ("python", "float('inf')", "Infinity", "AC"),  # inf and infinity, any case, are one value
    ("java", "Double.POSITIVE_INFINITY", "+inf", "AC"),
    ("go", "math.Inf(-1)", "-INF", "AC"),
    ("java", "Double.NEGATIVE_INFINITY", "inf", "WA"),  # infinities of different signs differ
    ("python", "'0x1p3'", "8", "AC"),  # C reads hexadecimal floats
    ("python", "float('nan')", "1.5", "WA"),  # a NaN is no finite number, and no finite number a NaN
    ("python", "1.5", "nan", "WA"),
    ("cpp", "HUGE_VAL", "1e300", "WA"),
    ("python", "'1_000'", "1000", "WA"),  # Python's float() reads 1_000; C's strtod, and so every judge, does not
])
def test_float_compare_reads_non_finite_and_c_numbers_as_domjudge(language, text, answer, expected):
    """DOMjudge's compare (``compare_float``): a token is a number when C's ``sscanf("%Lf")`` reads all of it;
    NaN equals NaN, infinities equal when their signs do, other classes differ (before: non-finite tokens were
    compared as text, so Java's ``NaN`` failed against ``nan``)."""
    problem = Problem((Case("", answer + "\n"),), compare="float")
    verdict, log = _first(language, _prints(language, text), problem)
    assert verdict == expected, log


@given(st.sampled_from(["nan", "inf", "infinity", "nan(0x7ff)"]), st.sampled_from(["", "+", "-"]), st.data())
def test_non_finite_spellings_in_any_case_read_as_one_number(word, sign, data):
    spelled = "".join(c.upper() if data.draw(st.booleans()) else c for c in word)
    value = c_float(sign + spelled)
    assert value is not None and not math.isfinite(value)
    floats = Problem((), compare="float")
    other = "nan" if word.startswith("nan") else ("-inf" if sign == "-" else "inf")
    assert token_match(sign + spelled, other, floats) and token_match(other, sign + spelled, floats)


HELLO = Problem((Case("", "hello\n"),), time_limit=1.0, output=MIB)
C_HEAD = "#include <stdio.h>\n#include <stdlib.h>\n#include <string.h>\n#include <pthread.h>\n"
FLOODS = {  # write forever, to stdout or stderr (DOMjudge's test-fill-stdout.cc and test-fill-stderr.cpp)
    "stdout": "int main(void) { for (;;) fputs(\"Fill stdout with nonsense.\\n\", stdout); }\n",
    "stderr": "int main(void) { for (;;) fputs(\"Fill stderr with nonsense.\\n\", stderr); }\n",
}


@pytest.mark.slow  # each DOMjudge-rules flood runs to its time limit (1 s CPU, more by the wall clock)
@pytest.mark.parametrize("stream", ["stdout", "stderr"])
@pytest.mark.parametrize(("rules", "expected"), [("kattis", "OLE"), ("dmoj", "OLE"), ("domjudge", "TLE")])
def test_an_output_flood_is_ole_where_stopped_and_tle_where_truncated(stream, rules, expected):
    """``truncate_output``: DOMjudge's runguard throws output past the cap away and lets the program run, so a flood
    reaches its time limit; DMOJ (and the default) stop it at the cap (before: OLE under every judge's rules)."""
    verdict, log = _first("c", C_HEAD + FLOODS[stream], HELLO, rules)
    assert verdict == expected, log


@pytest.mark.parametrize(("tail", "rules", "expected"), [
    ("return 0;", "domjudge", "OLE"),  # ended over the cap: OUTPUT-LIMIT
    ("fflush(stdout); abort();", "domjudge", "RE"),  # DOMjudge checks the exit before the truncation
    ("fflush(stdout); abort();", "kattis", "OLE"),  # stopped at the cap by RLIMIT_FSIZE: it never reached abort
])
def test_output_over_the_cap_then_an_end_follows_each_judges_order(tail, rules, expected):
    source = C_HEAD + "int main(void) { for (int i = 0; i < 200000; i++) puts(\"0123456789\"); " + tail + " }\n"
    verdict, log = _first("c", source, HELLO, rules)
    assert verdict == expected, log


@pytest.mark.parametrize("rules", list(RULES))
def test_output_under_the_cap_is_judged_whole_under_every_rule(rules):
    """Through the DOMjudge rules' pipe the output arrives whole and in order: 600 KiB under a 1 MiB cap, checked
    token by token, and stderr beside it is no output."""
    lines = 60000
    source = C_HEAD + (f"int main(void) {{ for (int i = 0; i < {lines}; i++) {{ printf(\"%09d\\n\", i); "
                       "if (i % 1000 == 0) fprintf(stderr, \"progress %d\\n\", i); } }\n")
    problem = Problem((Case("", "".join(f"{i:09d}\n" for i in range(lines))),), time_limit=2.0, output=MIB)
    verdict, log = _first("c", source, problem, rules)
    assert verdict == "AC", log


THREAD_STACK = C_HEAD + """
static void *report(void *unused) {
    pthread_attr_t attr;
    size_t size = 0;
    pthread_getattr_np(pthread_self(), &attr);
    pthread_attr_getstacksize(&attr, &size);
    printf("%zu\\n", size);
    return unused;
}
int main(void) {
    pthread_t thread;
    if (pthread_create(&thread, NULL, report, NULL) != 0) { puts("no thread"); return 0; }
    pthread_join(thread, NULL);
}
"""


@pytest.mark.parametrize(("rules", "expected"), [("domjudge", "AC"), ("dmoj", "AC"), ("kattis", "WA")])
def test_a_thread_gets_glibcs_default_stack_where_the_stack_is_unlimited(rules, expected):
    """``unlimited_stack``: DOMjudge's runguard and DMOJ's cptbox set ``RLIMIT_STACK`` unlimited, so glibc gives a
    thread its 2 MiB default (DOMjudge's test-multithread.c aborts otherwise); under the Kattis rules the stack is
    the memory limit, which a thread's stack takes too."""
    problem = Problem((Case("", f"{2 * MIB}\n"),), time_limit=2.0)
    verdict, log = _first("c", THREAD_STACK, problem, rules)
    assert verdict == expected, log


@pytest.mark.parametrize("rules", list(RULES))
def test_an_unlimited_stack_is_still_bounded_by_the_memory_limit(rules):
    """The sandbox's guarantee holds under every rule: recursion that needs 1 GiB of stack under a 64 MiB limit
    is stopped (RE or MLE), and 40 MiB of stack under it runs."""
    def recurse(mib: int) -> str:
        return C_HEAD + ("static long depth(long n) { volatile char pad[1024]; pad[0] = (char)n; "
                         "return n == 0 ? pad[0] : depth(n - 1) + pad[0]; }\n"
                         f"int main(void) {{ printf(\"%ld\\n\", depth({mib} * 1024L) * 0); }}\n")
    problem = Problem((Case("", "0\n"),), time_limit=4.0, memory=64 * MIB)
    deep, log = _first("c", recurse(1024), problem, rules)
    assert deep in ("RE", "MLE"), log
    assert _first("c", recurse(40), problem, rules)[0] == "AC"


@pytest.mark.slow  # the sleeper sleeps 2.5 s under each rule
@pytest.mark.parametrize(("rules", "expected"), [("domjudge", "TLE"), ("kattis", "AC"), ("dmoj", "AC")])
def test_a_program_that_sleeps_past_its_limit_meets_each_judges_wall_clock(rules, expected):
    """``wall``: with a 1 s limit, DOMjudge kills at 1 s + max(1 s, 10 %) = 2 s of wall clock (its
    test-suspend-ppid.c is TLE); DMOJ at 3 x 1 s; the default at 2 x 1 s + 1 s: a program that sleeps 2.5 s and
    prints the answer passes those (its CPU time decides)."""
    source = "#include <stdio.h>\n#include <unistd.h>\nint main(void) { usleep(2500000); puts(\"hello\"); }\n"
    verdict, log = _first("c", source, HELLO, rules)
    assert verdict == expected, log


NO_PUBLIC = "class Solution" + JAVA_BODY


@pytest.mark.parametrize(("source", "rules", "expected"), [
    (NO_PUBLIC, "dmoj", "CE"),  # DMOJ's find_class: "No public class"
    (NO_PUBLIC, "kattis", "AC"),
    (NO_PUBLIC, "domjudge", "AC"),
    ("public interface Solution" + JAVA_BODY, "dmoj", "CE"),  # DMOJ's pattern wants a class
    ("public final class Solution" + JAVA_BODY, "dmoj", "AC"),
    ("public class Shell { }\nclass Runner" + JAVA_BODY, "dmoj", "RE"),  # DMOJ runs the public class: no main
    ("public class Shell { }\nclass Runner" + JAVA_BODY, "kattis", "AC"),
])
def test_java_public_class_rule(source, rules, expected):
    """``java_public_class``: DMOJ requires a public class and runs it; DOMjudge and Kattis run the class with
    ``main`` (before: every rule ran the class with main, a false accept against DMOJ's ``java_no_public_class``)."""
    verdict, log = _first("java", source, ECHO, rules)
    assert verdict == expected, log


def test_the_reward_takes_the_rules_parameter():
    """``rules`` reaches the judge through the reward's parameters, and only the judges in the table are allowed."""
    if missing(LANGUAGES["java"]):
        pytest.skip(missing(LANGUAGES["java"]))
    contest = get_reward("contest")
    completion = f"```java\n{NO_PUBLIC}```"
    tests = [{"input": "3 4\n", "output": "7\n"}]
    assert contest.fn(completion, params=contest.params(), tests=tests).value == 1.0
    refused = contest.fn(completion, params=contest.params(rules="dmoj"), tests=tests)
    assert refused.value == 0.0 and refused.counts["ce"] == 1
    with pytest.raises(ValidationError, match="rules"):
        contest.params(rules="codeforces")
