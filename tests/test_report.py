"""grpo-host report: the page's content from a real record, and the page in real headless Chromium (slow)."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest
import sample_rewards
from conftest import GRPO_HOST, run_cli
from train_helpers import QUICK, ROOT

from grpo_host import Ensemble
from grpo_host.discovery.plugins import default_plugins, load_plugins
from grpo_host.kinds.monitor import MonitorSet, choose
from grpo_host.runs.record import RolloutRecord
from grpo_host.runs.report import build_report, write_report
from grpo_host.scoring.batch import feed, score_batch

EXAMPLE = ROOT / "examples" / "letters.yaml"
HOSTILE = '</script><script>document.title="pwned"</script><img src=x onerror=alert(1)>'


def _recorded(tmp_path: Path) -> Path:
    """A score-like record of two steps: a hostile text completion and an agent rollout among them."""
    out = tmp_path / "scores.jsonl"
    out.write_text("")
    record = RolloutRecord.beside(out, ["accuracy", "r1_strict_format"])
    trajectory = [{"role": "assistant", "content": "", "tool_calls": [
        {"type": "function", "function": {"name": "calc", "arguments": "{\"x\": 1}"}}]},
        {"role": "tool", "content": "1"}, {"role": "assistant", "content": "<answer>1</answer>"}]
    with Ensemble.from_spec("accuracy, r1_strict_format") as ensemble:
        for step in (1, 2):
            rows = [{"prompt": "say 1", "answer": "1", "completion": c}
                    for c in ("<answer>1</answer>", HOSTILE, "<answer>2</answer>")]
            completions = [r["completion"] for r in rows] + [trajectory]
            rows.append({"prompt": "say 1", "answer": "1"})
            record.take(score_batch(ensemble, rows, index=step - 1, step=step, completions=completions,
                                    labels=[f"line {i + 1}" for i in range(4)], groups=["g"] * 4))
    return out


def _monitored_run(tmp_path: Path) -> Path:
    """A run folder as a training host leaves it: the record, every installed monitor's metrics per step in
    ``metrics.jsonl`` and their alerts in ``summary.json``; text completions that grow to the length limit (so
    ``length`` logs a mean in tokens beside a clipped share and alerts), no tool call, no code."""
    run = tmp_path / "run"
    record = RolloutRecord(run / "rollouts", ["accuracy"])
    chosen = [n for n in default_plugins().registry.names("monitor") if n != "length"]
    monitors = MonitorSet(choose([*chosen, {"name": "length", "params": {"window": 2}}], default_plugins().registry,
                                 action="log"), quiet=1 << 30, echo=None)
    lines = []
    with Ensemble.from_spec("accuracy") as ensemble:
        for step in (1, 2, 3, 4):
            completions = [[{"role": "assistant", "content": f"<answer>{n}</answer>" + " and" * (step + n)}]
                           for n in range(4)]  # as TRL hands a chat run's completions: one assistant turn each
            rows = [{"prompt": "say 1", "answer": "1"}] * 4
            batch = feed(score_batch(ensemble, rows, index=step - 1, step=step, completions=completions,
                                     labels=[f"line {step}"] * 4, groups=["g"] * 4,
                                     lengths=[4 + step + n for n in range(4)], max_length=8), [record, monitors])
            lines.append(json.dumps({"step": step, **(batch.monitor_metrics or {})}))
    (run / "metrics.jsonl").write_text("\n".join(lines) + "\n")
    (run / "summary.json").write_text(json.dumps({"alerts": [a.as_dict() for a in monitors.alerts]}))
    return run


def test_per_step_figures_read_part_by_part_are_those_of_the_whole_record(tmp_path):
    """The page reads the record one part at a time (memory holds a part, not the record); its per-step means,
    coverage, failures and lengths equal those computed over the whole record at once, where a step spans two
    parts and a reward returns None on some rollouts."""
    from grpo_host.runs.record import read_record, record_folder
    from grpo_host.runs.report import _Scan

    out = tmp_path / "scores.jsonl"
    out.write_text("")
    record = RolloutRecord.beside(out, ["echo", "misbehave"])
    completions = ["1", "x", "raise", "25"]  # echo: None for x and raise; misbehave: fails on raise, None on x
    plugins = load_plugins(entry_points_group=None, plugins=[sample_rewards])
    with Ensemble.from_spec("echo, misbehave [on_error=skip]", plugins=plugins) as ensemble:
        for index, step in enumerate((1, 1, 2, 3)):
            chosen = completions[index:] + completions[:index]
            rows = [{"prompt": "say 1", "answer": "1", "completion": c} for c in chosen]
            record.take(score_batch(ensemble, rows, index=index, step=step, completions=chosen,
                                    labels=[f"line {i}" for i in range(4)], groups=["g", "g", "h", "h"]))
    figures = _Scan(record_folder(out), 300).per_step()
    table = read_record(out).to_pylist()
    assert figures["steps"] == [1, 2, 3]

    def mean(values: list) -> float | None:
        kept = [v for v in values if v is not None]
        return sum(kept) / len(kept) if kept else None

    for i, step in enumerate(figures["steps"]):
        rows = [r for r in table if r["step"] == step]
        assert figures["total"][i] == pytest.approx(mean([r["total"] for r in rows]))
        assert figures["failed"][i] == sum(r["error"] is not None for r in rows)
        assert figures["lengths"][0][i] == pytest.approx(mean([len(r["completion"]) for r in rows]))
        for name in ("echo", "misbehave"):
            values = [r[f"reward/{name}"] for r in rows]
            assert figures["mean"][name][i] == pytest.approx(mean(values))
            assert figures["coverage"][name][i] == pytest.approx(sum(v is not None for v in values) / len(rows))
    assert sum(figures["failed"]) > 0 and any(r["reward/echo"] is None for r in table)  # both were there


def test_monitors_that_saw_nothing_get_a_line_not_a_chart(tmp_path):
    page = build_report(_monitored_run(tmp_path))
    assert "Monitor length (✕: an alert fired)" in page and "from length: length explosion" in page
    # no tools and no code in this run: their monitors logged one value throughout and are named, not charted
    quiet = re.search(r'<p class="quiet">([^<]*)</p>', page)
    assert quiet and "tool_use (calls_mean 0, error_share 0, turns_mean 1, unfinished_share 0)" in quiet.group(1)
    assert "code_tamper (atexit_share 0," in quiet.group(1)
    assert "tool_use" not in page.replace(quiet.group(1), "") and "Monitor code_tamper" not in page


def test_the_page_holds_the_rollouts_escaped_and_needs_no_network(tmp_path):
    page = build_report(_recorded(tmp_path))
    assert HOSTILE not in page and "&lt;/script&gt;&lt;script&gt;document.title" in page
    # the agent rollout's turns, one per line
    assert "[tool] 1" in page and "&quot;name&quot;: &quot;calc&quot;" in page
    assert len(re.findall(r"<tr>", page)) == 1 + 8  # the header and every rollout of both steps
    assert "plotly" in page and not re.search(r"<script[^>]+src=", page)  # plotly.js inline, nothing fetched
    assert "accuracy" in page and "r1_strict_format" in page


def test_report_cli_names_what_is_missing(tmp_path):
    proc = run_cli("report", str(tmp_path))
    assert proc.returncode == 2 and "no rollout record" in proc.stderr and "Traceback" not in proc.stderr


def _chromium() -> str:
    found = next((shutil.which(n) for n in ("chromium", "chromium-browser", "google-chrome") if shutil.which(n)),
                 None)
    if found is None:
        pytest.skip("no Chromium on this machine (apt-get install chromium; scripts/system-deps.sh installs it)")
    return found


def _axes(dom: str) -> dict[str, list[str]]:
    """Each drawn figure's title and its y axes' titles, as Chromium rendered them."""
    out = {}
    for figure in dom.split('class="plotly-graph-div js-plotly-plot"')[1:]:
        title = re.search(r'class="gtitle"[^>]*>([^<]*)<', figure)
        out[title.group(1) if title else "?"] = re.findall(r'class="y\d*title"[^>]*>([^<]*)<', figure)
    return out


@pytest.mark.slow
def test_each_monitor_draws_on_its_own_axes_in_headless_chromium(tmp_path):
    browser = _chromium()
    page = write_report(_monitored_run(tmp_path))
    dom, console = _open(browser, page, tmp_path / "report.png")
    assert console == []
    axes = _axes(dom)
    # length's mean in tokens (5 to 10) and its clipped share (0 to 1) each on an axis of its own
    assert axes["Monitor length (✕: an alert fired)"] == ["clipped_share", "mean"]
    monitors = {t for t in axes if t.startswith("Monitor ")}
    assert not any(n in t for t in monitors for n in ("tool_use", "code_tamper"))  # neither ran in this run
    assert all(len(y) == len(set(y)) >= 1 for t, y in axes.items() if t in monitors)


def _open(browser: str, page: Path, shot: Path) -> tuple[str, list[str]]:
    """The page's DOM after its scripts ran, and every console line Chromium logged; a screenshot into ``shot``."""
    flags = ["--headless", "--no-sandbox", "--disable-gpu", "--virtual-time-budget=15000",
             f"--user-data-dir={shot.parent / 'chromium-profile'}"]
    dom = subprocess.run([browser, *flags, "--enable-logging=stderr", "--v=0", "--dump-dom", page.as_uri()],
                         capture_output=True, text=True, timeout=180)
    assert dom.returncode == 0, dom.stderr[-2000:]
    subprocess.run([browser, *flags, "--window-size=1280,3200", f"--screenshot={shot}", page.as_uri()],
                   capture_output=True, timeout=180, check=True)
    return dom.stdout, [line for line in dom.stderr.splitlines() if ":CONSOLE" in line]


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_a_training_runs_report_renders_in_headless_chromium(env, tmp_path):
    browser = _chromium()
    out = tmp_path / "letters"
    loud = {k: v for k, v in env.items() if k != "PYTHONWARNINGS"}  # the warnings a user would see
    proc = subprocess.run([GRPO_HOST, "train", str(EXAMPLE), *QUICK, "--set", "max_steps=4",
                           "--set", f"output_dir={out}"], capture_output=True, text=True, env=loud, cwd=ROOT,
                          timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    # the libraries' noise on a CPU run (torch's pin_memory, transformers' own deprecation) is not the user's
    assert "pin_memory" not in proc.stderr and "is_gradient_checkpointing" not in proc.stderr, proc.stderr
    page = write_report(out)
    assert page == out / "report.html"
    dom, console = _open(browser, page, tmp_path / "report.png")
    assert console == []  # no errors, nor anything else, in the console
    plots = dom.count('class="plotly-graph-div js-plotly-plot"')  # the class plotly.js adds once it drew a figure
    assert plots >= 4 and dom.count('class="main-svg"') >= plots  # every figure drew its SVG
    assert dom.count("<tr>") > 8 and "letter_share" in dom  # the rollouts table is filled
    assert (tmp_path / "report.png").stat().st_size > 10_000
