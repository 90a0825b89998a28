"""The languages a contest program may be written in: one table of how each compiles, runs and reports its version,
and what it needs bound.

Flags follow the big judges: Kattis's language pages (``open.kattis.com/languages/<language>``: compiler and run
commands, read 2026-12) and DOMjudge's default compile scripts (``sql/files/defaultdata/<lang>/run``).  C and
C++ with ``-O2`` and ``-DONLINE_JUDGE``, GNU dialects, dynamic linking against the system's libraries (Kattis and
DOMjudge link statically; the sandbox binds the system's libraries read-only instead), the C++ dialect chosen by
the fence tag as judges name it (``c++14``, ``cpp17``, ``gnu++20``; Codeforces' ``GNU G++20`` is ``g++20``);
Java's file named by its public class and run from the class that has ``main`` (DOMjudge's detection); Rust
``-O``; Go ``go build -buildmode=exe`` (a package other than ``main`` is a compile error); Python, PyPy, Ruby,
PHP and Bash checked for syntax at "compile" time so a syntax error is a compile error, as judges report it (Kattis
``php -l``, DOMjudge ``ruby -c``, ``bash -n``; Bash runs as DOMjudge's ``bash`` script runs it, ``bash main.sh``,
with coreutils, ``grep``, ``sed``, ``awk`` and ``bc`` to exec, :data:`_SHELL_TOOLS`); Pascal ``fpc -O2 -XS -Xt``
(Kattis) with DOMjudge's ``-Sg -viwn``; C# with
Mono's ``mcs -optimize+ -r:System.Numerics`` (Kattis); Kotlin ``kotlinc`` run on the JVM with Kattis's flags
(``-XX:+UseSerialGC -Xss64m -Xmx<limit>m``) from the class with ``main`` (:func:`kotlin_entry`); Haskell
``ghc -O2 -ferror-spans -threaded -rtsopts`` run with ``+RTS -M<limit>m -RTS`` (Kattis).  DOMjudge's further
languages as its ``awk``, ``pl``, ``lua``, ``f95``, ``plg``, ``ocaml``, ``r`` and ``adb`` scripts run them: AWK
``gawk`` (syntax checked by ``--pretty-print``, which runs nothing), Perl ``perl -c -W``, Lua ``luac`` to
``luac.out`` run by ``lua``, Fortran ``gfortran -x f95 -Wall -O2 -cpp``, Prolog ``compile.plg`` as one goal
(:data:`_PROLOG`), OCaml ``ocamlopt`` (which shells out: ``/bin/sh`` is bound for it), R ``parse()`` then
``exec/R --file`` (its own folder writable: :attr:`Language.scratch`), Ada ``gnatmake``; natively linked
dynamically, as C is here.  Common Lisp, which DOMjudge lacks, as Kattis runs it: SBCL's ``compile-file`` as the
check, then the source loaded, with ``--dynamic-space-size`` at the limit (SBCL reserves its whole heap).

Toolchains are looked up on the system's own path (``/usr/bin``,
``/usr/local/bin``) only, or at a fixed absolute path of Debian's packages (a
compiler behind a shell launcher is called directly: the sandbox has no
shell); the sandbox's programs run as an unprivileged uid, which cannot
enter a per-user install such as ``~/.cargo``.  Each toolchain's files are
bound read-only into a sandbox only when a row needs that language
(:func:`binds`), and a language whose toolchain is missing fails closed with
the system package that provides it (:func:`missing`).

Memory: native programs and the interpreters get ``RLIMIT_AS`` at the limit
plus a small allowance for their runtime's own mappings; the JVM (Java,
Kotlin), V8, GHC's runtime, Go's and PyPy's reserve far more address space
than they use (PyPy cannot start under 300 MiB), so they get their heap flag
at the limit instead (``-Xmx``, ``--max-old-space-size``, ``+RTS -M``; Go
and PyPy none) and the sandbox's cgroup as the hard bound (see
``docs/contest.md``).
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass

from pygments.lexers import JavaLexer, KotlinLexer
from pygments.token import Token

__all__ = ["LANGUAGES", "Language", "binds", "by_tag", "java_entry", "kotlin_entry", "missing", "tool_paths", "version"]

SYSTEM_PATH = "/usr/local/bin:/usr/bin:/bin"
MIB = 1 << 20
NAME_MAX = 255  # bytes in one file name (Linux file systems): javac writes each class to <name>.class


@dataclass(frozen=True)
class Language:
    """One language: its fence tags, source file, compile and run commands (``{tool}`` placeholders)."""

    name: str
    tags: tuple[str, ...]
    source: str
    tools: tuple[str, ...]
    package: str
    compile: tuple[str, ...]
    run: tuple[str, ...]
    version: tuple[str, ...] = ()
    """The command that prints the toolchain's version (its first line is :func:`version`)."""
    heap_flag: bool = False
    """No RLIMIT_AS (the runtime reserves far more address space than it uses): memory is bounded by its heap flag
    (``{memory_mb}`` in ``run``: Java, Kotlin, JavaScript, Haskell) or, for Go and PyPy, by the sandbox's cgroup
    alone."""
    memory_slack: int = 16 * MIB
    """Address space (and peak RSS) beyond the limit that the runtime itself needs."""
    native: bool = False
    """Machine code with no runtime of its own (C, C++, Rust, Pascal): its whole peak RSS is the program's."""
    processes: int = 4
    """Processes and threads the program may have (a runtime's own threads count)."""
    time_factor: float = 1.0
    files: int = 64
    env: tuple[tuple[str, str], ...] = ()
    oom_signs: tuple[str, ...] = ()
    """What the runtime prints when an allocation fails, beside the judge's own list (``judge.OOM_SIGNS``): the run
    is then MLE, not RE."""
    scratch: bool = False
    """The runtime writes files of its own at start (R's session folder, ``R_TempDir``, without which it will not
    start): the program's folder is then its own and writable (``TMPDIR`` is that folder), as file I/O makes it."""
    reads: tuple[str, ...] = ()
    """Further paths the toolchain reads (headers, a configuration file, a runtime's home), bound read-only where
    they exist, with the targets of the links under them."""
    pch: tuple[str, ...] = ()
    """System headers precompiled once per sandbox, toolchain and flags (C++: ``bits/stdc++.h``); the compile
    command then ends with ``-o main <source>``, and the header is built with what comes before."""

    def source_name(self, source: str) -> str:
        """The file the source is written to (Java: named for its public class, as javac requires)."""
        if self.name == "java":
            return f"{java_entry(source)[0]}.java"
        return self.source

    def refusal(self, source: str) -> str | None:
        """A compile error no compiler gets to report: a source or class file name longer than a file name may be
        (a Java class named with 300 letters), which javac cannot write, so judges answer CE, not a judge error; a
        Java ``package`` declaration, which DMOJ refuses as CE (and DOMjudge allows as CE)."""
        names = [self.source_name(source)]
        if self.name == "java":
            if (package := java_entry(source)[2]) is not None:
                return (f"error: package {package}: the judge runs a class of the unnamed package (DMOJ: a compile "
                        "error; javac -d would put it where the run does not look)")
            names.append(f"{java_entry(source)[1]}.class")
        for name in names:
            if len(name.encode("utf-8", "surrogatepass")) > NAME_MAX:
                return f"error: the file name {name[:40]}... is longer than the file system allows ({NAME_MAX} bytes)"
        return None

    @property
    def rss_allowance(self) -> int:
        """Peak RSS beyond the limit not held against the program: a runtime's own (native code gets none)."""
        return 0 if self.native else self.memory_slack

    def main(self, source: str) -> str:
        """What the run command starts: Java's and Kotlin's class that has ``main``; the source's stem otherwise."""
        if self.name == "java":
            return java_entry(source)[1]
        if self.name == "kotlin":
            return kotlin_entry(source)
        return self.source_name(source).rsplit(".", 1)[0]


_JAVA_TYPES = ("class", "interface", "enum", "record")


@functools.lru_cache(maxsize=256)
def java_entry(source: str) -> tuple[str, str, str | None, str | None]:
    """Java's (file stem, main class, package or None, public class or None), found as DOMjudge's
    ``java_javac_detect`` finds them: the file is named for the public top-level type (javac requires it), the
    program runs the top-level type that declares ``public static void main`` (else a ``static void main``: the
    launcher then says why it cannot run), public or not.  The fourth is the public top-level ``class`` (not an
    interface, enum or record), which DMOJ's rules run (:mod:`reward_plugins.contest.rules`).

    Read from Pygments' Java tokens, so comments, strings and text blocks that spell a class are not taken for
    one, every modifier (``final``, ``strictfp``, ``abstract``, ``sealed``, annotations) is allowed, and names
    may be any Java identifier (``Ärger``).  With neither, ``Main``.
    """
    found: list[list] = []  # [name, public, main: 0 none, 1 static, 2 public static, kind], top-level types in order
    depth = parens = 0
    words: set[str] = set()  # keywords since the last declaration boundary
    naming = ""  # the type keyword whose name comes next
    package = None
    for kind, text in JavaLexer().get_tokens(source):
        if kind in Token.Text or kind in Token.Comment or kind in Token.Whitespace:
            continue
        if kind in Token.Name.Namespace and words == {"package"} and not depth:
            package = text
        if naming:
            found.append([text, "public" in words, 0, naming])
            naming = ""
        elif kind in Token.Keyword and text in _JAVA_TYPES:
            naming = text if depth == 0 and not parens else ""
        elif kind in Token.Keyword:
            words.add(text)
        elif text in ("(", ")"):
            parens = max(parens + (1 if text == "(" else -1), 0)
        elif text in ("{", "}", ";") and not parens:
            depth = max(depth + {"{": 1, "}": -1, ";": 0}[text], 0)
            words = set()
        elif depth == 1 and found and text == "main" and kind in Token.Name.Function and {"static", "void"} <= words:
            found[-1][2] = max(found[-1][2], 2 if "public" in words else 1)
    public = next((name for name, is_public, _, _ in found if is_public), None)
    runs = max(found, key=lambda t: t[2], default=None)
    main = runs[0] if runs is not None and runs[2] else public or "Main"
    public_class = next((name for name, is_public, _, kind in found if is_public and kind == "class"), None)
    return public or main, main, package, public_class


@functools.lru_cache(maxsize=256)
def kotlin_entry(source: str) -> str:
    """The class a Kotlin program runs from, found as DOMjudge's ``kt`` script's ``DetectMain`` finds it: a top-level
    ``fun main`` lives in the file's class (``MainKt`` for ``main.kt``, or the name ``@file:JvmName`` gives); else
    the first ``object`` or ``class`` that declares ``main`` (a companion object's, with ``@JvmStatic``, is its
    class's).  Qualified by the file's ``package``.  Read from Pygments' Kotlin tokens, so a ``main`` in a comment or
    a string is none."""
    owners: list[str | None] = []  # per open brace: the object or class it opens, or None
    pending: str | None = None  # the object or class whose body the next brace opens
    package, file_class, found, naming, declaring = "", "MainKt", None, "", False
    tokens = [(kind, text) for kind, text in KotlinLexer().get_tokens(source)
              if text.strip() and kind not in Token.Comment]
    for k, (kind, text) in enumerate(tokens):
        if text == "@file" and tokens[k + 1:k + 3] and tokens[k + 2][1] == "JvmName":
            names = [t for kind2, t in tokens[k + 3:k + 7] if kind2 in Token.Literal.String and t != '"']
            file_class = names[0] if names else file_class
        elif kind in Token.Name.Namespace and tokens[k - 1][1] == "package" and not owners:
            package = f"{text}."
        elif text in ("object", "class") and kind in Token.Keyword:
            naming = text
            if tokens[k - 1][1] == "companion":  # its main is its class's, with @JvmStatic
                pending, naming = (owners[-1] if owners else None), ""
        elif naming:
            pending, naming = (text if kind in Token.Name else None), ""
        elif text == "{":
            owners.append(pending)
            pending = None
        elif text == "}" and owners:
            owners.pop()
        elif text == "fun":
            declaring = True
            continue
        elif declaring and text == "main" and kind in Token.Name.Function:
            if not owners:
                return package + file_class
            if found is None and owners[-1] is not None:
                found = owners[-1]
        declaring = False
    return package + (found or file_class)


def _python() -> str:
    return sys.executable


def _cpp(name: str, dialect: str, *tags: str) -> Language:
    """g++ at one GNU dialect (Kattis: ``-std=gnu++20``; Codeforces' G++14/17/20); ``bits/stdc++.h`` and ``iostream``,
    the headers contest programs include first, precompiled."""
    return Language(name, tags, "main.cpp", ("g++", "as", "ld"), "g++",
                    ("{g++}", f"-std={dialect}", "-O2", "-pipe", "-DONLINE_JUDGE", "-o", "main", "main.cpp"),
                    ("./main",), version=("{g++}", "--version"), native=True, reads=("/usr/include",),
                    pch=("bits/stdc++.h", "iostream"))


_SYNTAX = "import sys; compile(open('main.py', 'rb').read(), 'main.py', 'exec')"  # no .pyc left in the artifact
_KOTLIN = "/usr/share/kotlin/kotlinc"  # Debian's kotlin package (its kotlinc is a bash launcher of this jar)
_KOTLINC = ("-cp", "{kotlin-preloader}", "org.jetbrains.kotlin.preloading.Preloader", "-cp", "{kotlin-compiler}",
            "org.jetbrains.kotlin.cli.jvm.K2JVMCompiler")  # what Debian's kotlinc runs
_GHC = "/usr/lib/ghc"  # Debian's ghc: /usr/bin/ghc is a shell launcher of bin/ghc -B<this>
_PROLOG = ("consult('main.plg'), (current_predicate(main/0) -> true ; format(user_error, 'main/0 not found~n', []), "
           "halt(3)), qsave_program(main, [goal((main, halt)), toplevel(halt(1)), stand_alone(true)]), halt")
"""DOMjudge's ``plg/compile.plg`` as one goal (the sandbox has no file of ours to run): load the program, refuse one
without ``main/0``, save a stand-alone executable that runs ``main`` and halts (status 1 if it fails)."""
_GNAT = ("x86_64-linux-gnu-gcc-12", "x86_64-linux-gnu-gnatbind-12", "x86_64-linux-gnu-gnatlink-12")
"""What gnatmake runs, by these names (Debian 12's gnat: GCC 12), to compile, bind and link."""
_R = "/usr/lib/R/bin/exec/R"  # Debian's r-base-core: Rscript and /usr/bin/R start it through a shell script
_COREUTILS = (
    "[", "arch", "b2sum", "base32", "base64", "basename", "basenc", "cat", "chgrp", "chmod", "chown", "cksum", "comm",
    "cp", "csplit", "cut", "date", "dd", "df", "dir", "dircolors", "dirname", "du", "echo", "env", "expand", "expr",
    "factor", "false", "fmt", "fold", "groups", "head", "hostid", "id", "install", "join", "link", "ln", "logname",
    "ls", "md5sum", "mkdir", "mkfifo", "mknod", "mktemp", "mv", "nice", "nl", "nohup", "nproc", "numfmt", "od",
    "paste", "pathchk", "pr", "printenv", "printf", "ptx", "pwd", "readlink", "realpath", "rm", "rmdir", "seq",
    "sha1sum", "sha224sum", "sha256sum", "sha384sum", "sha512sum", "shred", "shuf", "sleep", "sort", "split", "stat",
    "stdbuf", "stty", "sum", "sync", "tac", "tail", "tee", "test", "timeout", "touch", "tr", "true", "truncate",
    "tsort", "tty", "uname", "unexpand", "uniq", "unlink", "vdir", "wc", "whoami", "yes")
"""GNU coreutils' commands (Debian 12's package, less SELinux's ``chcon``/``runcon`` and the login records'
``pinky``/``users``/``who``): how a Bash program sorts, counts and computes, as in DOMjudge's chroot."""
_SHELL_TOOLS = tuple(f"/usr/bin/{tool}" for tool in (*_COREUTILS, "grep", "sed", "awk", "bc"))
"""What a Bash program can exec beside Bash, each bound read-only where it is installed (``awk`` as the program
the system's alternative names); nothing else on ``/usr/bin``."""

LANGUAGES: dict[str, Language] = {lang.name: lang for lang in (
    Language("c", ("c",), "main.c", ("gcc", "as", "ld"), "gcc",
             ("{gcc}", "-std=gnu17", "-O2", "-pipe", "-DONLINE_JUDGE", "-o", "main", "main.c", "-lm"),
             ("./main",), version=("{gcc}", "--version"), native=True, reads=("/usr/include",)),
    _cpp("cpp", "gnu++17", "cpp", "c++", "cc", "cxx", "cpp17", "c++17", "gnu++17", "g++17"),
    _cpp("cpp14", "gnu++14", "cpp14", "c++14", "gnu++14", "g++14"),
    _cpp("cpp20", "gnu++20", "cpp20", "c++20", "gnu++20", "g++20"),
    Language("rust", ("rust", "rs"), "main.rs", ("rustc", "cc", "as", "ld"), "rustc",
             ("{rustc}", "-O", "--edition", "2021", "-C", "debuginfo=0", "-o", "main", "main.rs"), ("./main",),
             version=("{rustc}", "--version"), memory_slack=32 * MIB, native=True, reads=("/usr/include",)),
    Language("go", ("go", "golang"), "main.go", ("go",), "golang-go",
             ("{go}", "build", "-buildmode=exe", "-o", "main", "main.go"), ("./main",), version=("{go}", "version"),
             heap_flag=True, memory_slack=64 * MIB, processes=32,
             env=(("GO111MODULE", "off"), ("GOCACHE", "/tmp/work/build/.cache"), ("GOPATH", "/tmp/work/build/.go"),
                  ("CGO_ENABLED", "0"), ("GOTOOLCHAIN", "local"))),
    Language("java", ("java",), "Main.java", ("javac", "java"), "default-jdk-headless",
             ("{javac}", "-encoding", "UTF-8", "-J-Xmx512m", "-J-XX:+UseSerialGC", "-d", ".", "{source}"),
             ("{java}", "-Xmx{memory_mb}m", "-Xss64m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
              "-XX:-UsePerfData", "-cp", ".", "{main}"), version=("{javac}", "-version"),
             heap_flag=True, memory_slack=128 * MIB, processes=64, time_factor=2.0, files=256),
    Language("kotlin", ("kotlin", "kt", "kts"), "main.kt",
             ("java", f"{_KOTLIN}/lib/kotlin-preloader.jar", f"{_KOTLIN}/lib/kotlin-compiler.jar",
              f"{_KOTLIN}/lib/kotlin-stdlib.jar"), "kotlin",
             ("{java}", "-Xmx768m", "-Xss16m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-XX:-UsePerfData",
              *_KOTLINC, "-kotlin-home", _KOTLIN, "-nowarn", "-d", "main.jar", "main.kt"),  # one file: a package's
             # classes in their folders (the artifact keeps the build folder's files, not its folders)
             ("{java}", "-Xmx{memory_mb}m", "-Xss64m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
              "-XX:-UsePerfData", "-cp", "main.jar:{kotlin-stdlib}", "{main}"),
             version=("{java}", *_KOTLINC, "-version"),
             heap_flag=True, memory_slack=128 * MIB, processes=64, time_factor=2.0, files=256,
             reads=("/usr/share/kotlin", "/usr/share/java")),
    Language("javascript", ("javascript", "js", "node", "nodejs"), "main.js", ("node",), "nodejs",
             ("{node}", "--check", "main.js"), ("{node}", "--max-old-space-size={memory_mb}", "main.js"),
             version=("{node}", "--version"), heap_flag=True, memory_slack=96 * MIB, processes=16, files=128),
    Language("python", ("python", "python3", "py", "py3"), "main.py", (), "python3",
             ("{python}", "-I", "-S", "-B", "-c", _SYNTAX), ("{python}", "-I", "-S", "-B", "main.py"),
             version=("{python}", "--version"), memory_slack=48 * MIB),
    Language("pypy3", ("pypy3", "pypy"), "main.py", ("pypy3",), "pypy3",
             ("{pypy3}", "-S", "-B", "-c", _SYNTAX), ("{pypy3}", "-S", "-B", "main.py"),
             version=("{pypy3}", "--version"), heap_flag=True, memory_slack=96 * MIB),  # its GC reserves ~300 MiB
    Language("bash", ("bash", "sh", "shell"), "main.sh", ("bash",), "bash", ("{bash}", "-n", "main.sh"),
             ("{bash}", "main.sh"), version=("{bash}", "--version"), processes=16, reads=_SHELL_TOOLS),
    Language("ruby", ("ruby", "rb"), "main.rb", ("ruby",), "ruby",
             ("{ruby}", "-c", "main.rb"), ("{ruby}", "main.rb"), version=("{ruby}", "--version"),
             memory_slack=128 * MIB, processes=8),
    Language("php", ("php",), "main.php", ("php",), "php-cli",
             ("{php}", "-n", "-d", "display_errors=stderr", "-d", "html_errors=0", "-l", "main.php"),
             ("{php}", "-n", "-d", "display_errors=stderr", "-d", "html_errors=0", "-d", "memory_limit={memory_mb}M",
              "main.php"), version=("{php}", "-n", "--version"), memory_slack=48 * MIB,
             reads=("/usr/share/zoneinfo",)),
    Language("pascal", ("pascal", "pas", "fpc", "freepascal", "delphi"), "main.pas", ("fpc", "ppcx64", "ld", "ld.bfd"),
             "fp-compiler",
             ("{fpc}", "-O2", "-XS", "-Xt", "-Sg", "-viwn", "-dONLINE_JUDGE", "-omain", "main.pas"), ("./main",),
             version=("{fpc}", "-iV"), native=True, reads=("/etc/fpc.cfg",)),
    Language("csharp", ("csharp", "cs", "c#", "mono", "mcs"), "main.cs", ("mono", "/usr/lib/mono/4.5/mcs.exe"),
             "mono-mcs", ("{mono}", "{mcs}", "-optimize+", "-r:System.Numerics", "-d:ONLINE_JUDGE", "-out:main.exe",
                          "main.cs"), ("{mono}", "main.exe"), version=("{mono}", "--version"),
             memory_slack=96 * MIB, processes=32, files=128, reads=("/etc/mono",),
             env=(("MONO_LOG_DEST", "/dev/null"),)),  # its warnings (a thread's priority, which the programs' filter
             # refuses) go to stdout otherwise, into the program's output
    Language("haskell", ("haskell", "hs", "ghc"), "main.hs",
             (f"{_GHC}/bin/ghc", "x86_64-linux-gnu-gcc", "gcc", "as", "ld", "ld.gold", "x86_64-linux-gnu-ld.gold"),
             "ghc", ("{ghc}", f"-B{_GHC}", "-O2", "-ferror-spans", "-threaded", "-rtsopts", "-o", "main", "main.hs"),
             ("./main", "+RTS", "-M{memory_mb}m", "-RTS"), version=("{ghc}", f"-B{_GHC}", "--version"),
             heap_flag=True, memory_slack=32 * MIB, processes=16, reads=(_GHC, "/var/lib/ghc", "/usr/include")),
    Language("awk", ("awk", "gawk"), "main.awk", ("gawk",), "gawk",
             ("{gawk}", "--pretty-print=/dev/null", "-f", "main.awk"), ("{gawk}", "-f", "main.awk"),
             version=("{gawk}", "--version")),
    Language("perl", ("perl", "pl"), "main.pl", ("perl",), "perl",
             ("{perl}", "-c", "-W", "main.pl"), ("{perl}", "main.pl"), version=("{perl}", "-v"),
             memory_slack=32 * MIB, reads=("/usr/share/perl", "/usr/share/perl5", "/etc/perl"),
             oom_signs=("Out of memory!",)),
    Language("lua", ("lua",), "main.lua", ("lua", "luac"), "lua5.4",
             ("{luac}", "-o", "luac.out", "main.lua"), ("{lua}", "luac.out"), version=("{lua}", "-v"),
             oom_signs=("not enough memory",)),
    Language("fortran", ("fortran", "f95", "f90", "gfortran"), "main.f95", ("gfortran", "as", "ld"), "gfortran",
             ("{gfortran}", "-x", "f95", "-Wall", "-O2", "-cpp", "-o", "main", "main.f95"), ("./main",),
             version=("{gfortran}", "--version"), native=True),
    Language("prolog", ("prolog", "plg", "swipl"), "main.plg", ("swipl",), "swi-prolog-nox",
             ("{swipl}", "--on-error=halt", "-g", _PROLOG, "-t", "halt(1)"), ("./main",),
             version=("{swipl}", "--version"), memory_slack=32 * MIB,
             oom_signs=("stack_limit",)),  # its resource error's advice (its stacks hold all its data)
    Language("ocaml", ("ocaml", "ml"), "main.ml",
             ("ocamlopt", "x86_64-linux-gnu-as", "x86_64-linux-gnu-gcc", "ld", "/bin/sh"), "ocaml-nox",
             ("{ocamlopt}", "-o", "main", "main.ml", "-ccopt", "-pipe"), ("./main",),
             version=("{ocamlopt}", "-version"), native=True, env=(("TMPDIR", "."),),
             oom_signs=("Out_of_memory",)),
    Language("ada", ("ada", "adb", "gnat"), "main.adb", ("gnatmake", *_GNAT, "as", "ld"), "gnat",
             ("{gnatmake}", "-o", "main", "main.adb"), ("./main",), version=("{gnatmake}", "--version"),
             native=True, oom_signs=("heap exhausted",)),
    Language("lisp", ("lisp", "commonlisp", "cl", "sbcl"), "main.lisp", ("sbcl",), "sbcl",
             ("{sbcl}", "--noinform", "--noprint", "--non-interactive", "--eval", "(require :asdf)", "--eval",
              '(if (equal (compile-file "main.lisp") NIL) (sb-ext:exit :code 1) ())'),
             ("{sbcl}", "--dynamic-space-size", "{memory_mb}MB", "--control-stack-size", "64", "--noinform",
              "--non-interactive", "--load", "main.lisp"), version=("{sbcl}", "--version"),
             heap_flag=True, memory_slack=64 * MIB),
    Language("r", ("r", "rscript"), "main.R", (_R, "/bin/sh"), "r-base-core",
             ("{R}", "--no-echo", "--no-restore", "-e", "invisible(parse('main.R'))"),
             ("{R}", "--no-echo", "--no-restore", "--file=main.R"), version=("{R}", "--version"),
             memory_slack=64 * MIB, scratch=True, files=256, processes=8, env=(("R_HOME", "/usr/lib/R"),),
             reads=("/etc/R", "/usr/share/R", "/etc/alternatives/libblas.so.3-x86_64-linux-gnu",
                    "/etc/alternatives/liblapack.so.3-x86_64-linux-gnu",  # the BLAS Debian links in /etc
                    "/usr/bin/which", *_SHELL_TOOLS),  # R's utils finds programs with which, cleans up with rm
             oom_signs=("cannot allocate vector",)),
)}

_TAGS = {tag: lang for lang in LANGUAGES.values() for tag in (lang.name, *lang.tags)}


def by_tag(tag: str | None) -> Language | None:
    """The language a fence tag or a ``language`` column names (``C++``, ``python3``, ``rs``), or None."""
    if not tag:
        return None
    return _TAGS.get(str(tag).strip().lower().replace(" ", ""))


def _placeholder(tool: str) -> str:
    """A tool's name in the commands' ``{...}`` placeholders: ``g++``; an absolute path's file stem (``mcs``)."""
    return os.path.basename(tool).split(".")[0] if os.path.isabs(tool) else tool


_NAMED = ("gcc", "g++", "cc", "as", "ld", "ld.gold", "ld.bfd", "x86_64-linux-gnu-gcc", "x86_64-linux-gnu-ld.gold",
          "ppcx64")
"""Tools kept at the path they are called by (a link's name): gcc finds its passes by it, and ghc its C compiler,
fpc its compiler proper."""


@functools.cache
def tool_paths(lang: Language) -> dict[str, str] | None:
    """Each tool's path by placeholder (real paths, so Java's launcher finds its home from its own; those in
    :data:`_NAMED` as called, and absolute ones as written: a jar's relative class path is read from where it
    lies), or None if one is missing; Python is the interpreter that runs grpo-host (already
    bound into every sandbox)."""
    if lang.name == "python":
        return {"python": _python()}
    found = {}
    for tool in lang.tools:
        path = (tool if os.path.exists(tool) else None) if os.path.isabs(tool) else shutil.which(tool, path=SYSTEM_PATH)
        if path is None:
            return None
        found[_placeholder(tool)] = path if tool in _NAMED or os.path.isabs(tool) else os.path.realpath(path)
    return found


def missing(lang: Language) -> str | None:
    """Why ``lang`` cannot be judged here (naming the system package), or None."""
    if tool_paths(lang) is None:
        absent = [t for t in lang.tools
                  if not (os.path.exists(t) if os.path.isabs(t) else shutil.which(t, path=SYSTEM_PATH))]
        return (f"the {lang.name} toolchain is not installed ({', '.join(absent)} not on {SYSTEM_PATH}): "
                f"apt-get install {lang.package}")
    return None


@functools.cache
def version(lang: Language) -> str | None:
    """The first line the toolchain's version probe prints (``g++ (Debian 12.2.0-14) 12.2.0``), or None when it is
    missing or the probe fails; run on the host, once per process."""
    tools = tool_paths(lang)
    if tools is None or not lang.version:
        return None
    argv = [part.format(**tools) for part in lang.version]
    try:
        done = subprocess.run(argv, capture_output=True, timeout=60, check=False,
                              env={"PATH": SYSTEM_PATH, **dict(lang.env)})  # R's R_HOME
    except (OSError, subprocess.TimeoutExpired):
        return None
    lines = (done.stdout + done.stderr).decode("utf-8", "replace").strip().splitlines()
    return lines[0].strip() if done.returncode == 0 and lines else None


def binds(lang: Language) -> tuple[str, ...]:
    """What a sandbox must bind read-only for ``lang``: its tools (at their path), the files they read (its
    ``reads``, with the targets of their links), a JDK's linked-out files, a GOROOT."""
    tools = tool_paths(lang) or {}
    paths = set(tools.values())
    for read in lang.reads:
        if os.path.exists(read):
            paths |= {read} | (_links_out(read) if os.path.isdir(read) else {os.path.realpath(read)} - {read})
    if "java" in tools:  # Debian's JDK links its conf/ and security files into /etc
        home = os.path.dirname(os.path.dirname(tools["java"]))
        paths |= _links_out(os.path.join(home, "conf")) | _links_out(os.path.join(home, "lib"))
    if lang.name == "go":  # GOROOT: the compiler, linker and std, whose src/ Debian links into /usr/share
        root = os.path.dirname(os.path.dirname(tools["go"]))
        paths |= {root} | _links_out(root)
    return tuple(sorted(paths))


def _links_out(root: str) -> set[str]:
    """The targets of symbolic links under ``root`` that lie outside it (bound too, or the links dangle)."""
    found = set()
    for folder, dirs, files in os.walk(root):
        for name in dirs + files:
            path = os.path.join(folder, name)
            if (os.path.islink(path) and not (target := os.path.realpath(path)).startswith(root + "/")
                    and os.path.exists(target)):
                found.add(target)
    return found
