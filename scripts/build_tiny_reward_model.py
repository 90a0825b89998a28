"""Write the tiny reward model the ``reward_model`` reward's examples name (reward_plugins/reward_model/tiny_model).

The examples are the reward's documentation and are scored by the examples test offline, so they need a real
checkpoint that loads through ``from_pretrained`` in any environment, and scores that do not change with torch's
random initialisation.  This one is the prm pack's tiny ``LlamaForSequenceClassification`` (num_labels=1, a
character-level tokenizer) with its weights set by hand: every decoder layer's output projections are zero, so the
final hidden state of the last token is that token's embedding, and the head reads one feature of it.  Every
character embeds along one axis except the sentence ends ``.``, ``!`` and ``?``, which embed along another; the
head maps the first to a logit of about -1 and the second to about +1.  The chat template ends on the answer's
last character, so the model prefers an answer that ends a sentence to one that trails off: a toy reward model
whose preference is known exactly, for documentation and offline trials, not for training.

Run ``python scripts/build_tiny_reward_model.py [FOLDER]`` (default: the pack's tiny_model) to rebuild it;
tests/test_reward_model.py checks that the shipped files are what this writes.
"""

from __future__ import annotations

import math
import sys
import tempfile
from pathlib import Path

SENTENCE_ENDS = ".!?"
TEMPLATE = ("{% for m in messages %}{{ m['role'] }}: {{ m['content'] }}{% if not loop.last %}\n{% endif %}"
            "{% endfor %}")
"""One line per turn, ending on the answer's last character (no newline, no end token after it)."""
HIDDEN = 8
SHIPPED = Path(__file__).resolve().parents[1] / "reward_plugins" / "reward_model" / "tiny_model"


def build(path: Path) -> Path:
    """Write the tiny reward model to ``path`` (see the module docstring); return the path."""
    import torch
    import transformers

    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from reward_plugins.prm.tiny_prm import build_tiny_prm

    with tempfile.TemporaryDirectory() as scratch:
        build_tiny_prm(scratch, "sequence_classification", step_tag=None, hidden_size=HIDDEN, num_layers=1,
                       max_positions=512)
        tokenizer = transformers.AutoTokenizer.from_pretrained(scratch)
        model = transformers.AutoModelForSequenceClassification.from_pretrained(scratch)
    tokenizer.chat_template = TEMPLATE
    scale = math.sqrt(HIDDEN)  # an embedding of norm sqrt(HIDDEN) has RMS 1: the final RMSNorm keeps it as it is
    with torch.no_grad():
        for name, weight in model.model.layers.named_parameters():
            if not name.endswith("layernorm.weight"):
                weight.zero_()  # attention and MLP add nothing to the residual stream
        embedding = torch.zeros_like(model.model.embed_tokens.weight)
        embedding[:, 0] = scale
        for char in SENTENCE_ENDS:
            token = tokenizer.convert_tokens_to_ids(char)
            embedding[token] = 0.0
            embedding[token, 1] = scale
        model.model.embed_tokens.weight.copy_(embedding)
        head = torch.zeros_like(model.score.weight)
        head[0, 0], head[0, 1] = -1.0 / scale, 1.0 / scale
        model.score.weight.copy_(head)
    path.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(path)
    tokenizer.save_pretrained(path)
    return path


if __name__ == "__main__":
    print(build(Path(sys.argv[1]) if len(sys.argv) > 1 else SHIPPED))
