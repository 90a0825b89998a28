"""The MLX agent loop's time per episode, with the kept KV caches and without them.

``builtin:tiny-tools`` warmed up to open with the ``read`` call (the agent
tests' warm-up, or ``--model`` for one already made), the test pack's
``notes`` environment, ``max_tool_calls: 2`` and 120 tokens, as the agent
tests run it: each episode is a call, its result and another turn.  Two
samplers take turns episode by episode: ``kept`` (the backend's: the
episode's KV cache kept across its turns, each prompt prefilled once for its
group of 4) and ``re-read`` (``generate_step`` over the whole context at
every turn, as the loop sampled before).  Greedy decoding, so both must make
the same episodes, which is checked.

    python benchmarks/agent_episodes.py --groups 6
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from agent_helpers import ROWS, warm_up  # noqa: E402
from conftest import lay_out_pack  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--groups", type=int, default=6, help="groups of 4 episodes per sampler")
    parser.add_argument("--model", help="a warmed-up model folder (default: warm one up)")
    args = parser.parse_args()
    import mlx.core as mx
    from mlx_lm import load
    from mlx_lm.generate import generate_step
    from mlx_lm.sample_utils import make_sampler

    from grpo_host.discovery.plugins import load_plugins
    from grpo_host.training.agent_loop import ChatTools, run_episode
    from grpo_host.training.backends.mlx_agents import _sampling

    with tempfile.TemporaryDirectory() as tmp:
        pack = Path(tmp) / "site"
        lay_out_pack(ROOT / "tests" / "packs" / "agentpack", pack)
        model_dir = Path(args.model) if args.model else warm_up(Path(tmp) / "warm" / "model", pack)
        sys.path.insert(0, str(pack))
        notes = load_plugins(env={"GRPO_HOST_LOAD_PLUGINS": "agentpack"}).registry.environment("notes")
        model, tokenizer = load(str(model_dir))
    chat, greedy, stops = ChatTools(tokenizer._tokenizer), make_sampler(0.0), set(tokenizer.eos_token_ids)

    def reread(context: list[int], budget: int) -> list[int]:
        out: list[int] = []
        for token, _ in generate_step(mx.array(context), model, max_tokens=budget, sampler=greedy):
            out.append(int(token))
            if out[-1] in stops:
                break
        return out

    seconds: dict[str, list[float]] = {"kept": [], "re-read": []}
    tokens = []
    for group in range(args.groups):
        row_id = group % len(ROWS)
        prompts: dict = {}
        for _ in range(4):
            made = {}
            for name in ("kept", "re-read"):
                generate = _sampling(model, greedy, stops, [], prompts) if name == "kept" else reread
                session = notes.session_class()(rows=[{"answer": "1"}] * len(ROWS))
                start = time.perf_counter()
                made[name] = run_episode(chat, session, ROWS[row_id]["prompt"], row_id, generate, max_tokens=120,
                                         max_tool_calls=2)
                seconds[name].append(time.perf_counter() - start)
            a, b = made["kept"], made["re-read"]
            if (a.ids, a.mask, a.messages) != (b.ids, b.mask, b.messages):
                raise SystemExit("the kept caches changed an episode")
            tokens.append((len(a.prompt_ids), len(a.ids), len(a.messages)))
    print(json.dumps({
        "episodes": len(tokens), "prompt_tokens": tokens[0][0],
        "completion_tokens_median": statistics.median(t[1] for t in tokens),
        "messages_median": statistics.median(t[2] for t in tokens),
        **{f"{name}_ms_median": round(1000 * statistics.median(v), 1) for name, v in seconds.items()},
        **{f"{name}_ms_p90": round(1000 * sorted(v)[int(0.9 * (len(v) - 1))], 1) for name, v in seconds.items()},
        "same_episodes": True, "load": round(os.getloadavg()[0], 1), "cpus": os.cpu_count(),
    }, indent=2))


if __name__ == "__main__":
    main()
