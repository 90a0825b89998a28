"""The contest judge's verdicts follow the reference judges' rules (issue 37), each class with instances compiled and
run in the real sandbox.

* Java: the file is named for the public class whatever its modifiers or alphabet, and the program runs the class
  that declares ``main``, public or not (DOMjudge's ``java_javac_detect``); a class spelled in a comment or a string
  is no class; a ``package`` declaration is a compile error (DMOJ).
* Go: a package other than ``main`` is a compile error (``go build`` made an archive, which then could not start:
  a judge error before).
* A source or class file name longer than the file system allows is a compile error, not a judge error.
* The float comparison reads numbers as C does and NaN and infinities as DOMjudge's compare does.
"""

from __future__ import annotations

import math
import time

import pytest
from hypothesis import given
from hypothesis import strategies as st

from reward_plugins.contest.judge import Case, Problem, Program, c_float, judge, token_match
from reward_plugins.contest.languages import LANGUAGES, java_entry, missing
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


def _first(language: str, source: str, problem: Problem = ECHO) -> tuple[str, str]:
    if why := missing(LANGUAGES[language]):
        pytest.skip(why)
    report = judge(Program(LANGUAGES[language], source), problem, deadline=time.monotonic() + 120)
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
