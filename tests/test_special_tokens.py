"""Trailing EOS/pad strings: only the run at the very end goes, from a real tokenizer or a list."""

from __future__ import annotations

import pytest

from grpo_host.scoring.special_tokens import COMMON_END_TOKENS, end_tokens, strip_end_tokens

ANSWER = "<think>\nx\n</think>\n<answer>\n4\n</answer>\n"


@pytest.mark.parametrize("tail", ["<|im_end|>", "<|im_end|>\n", "<|im_end|><|endoftext|><|endoftext|>",
                                  "</s>", "<|eot_id|>", "<|im_end|>\n<|endoftext|>  "])
def test_the_run_at_the_end_goes_and_the_whitespace_before_it_stays(tail):
    assert strip_end_tokens(ANSWER + tail, COMMON_END_TOKENS) == ANSWER


def test_markers_inside_the_text_stay():
    text = "say </s> then <|im_end|> mid-text, and end"
    assert strip_end_tokens(text, COMMON_END_TOKENS) == text
    assert strip_end_tokens("<answer>\n4", COMMON_END_TOKENS) == "<answer>\n4"
    assert strip_end_tokens("</s>", COMMON_END_TOKENS) == ""
    assert strip_end_tokens(ANSWER + "</s>", ()) == ANSWER + "</s>"


@pytest.mark.slow  # imports transformers and loads a tokenizer: a few seconds
def test_tokens_from_a_tokenizer_or_a_list():
    pytest.importorskip("transformers")
    from grpo_host.training.builtin_model import tiny_model_dir

    assert end_tokens(str(tiny_model_dir())) == ("</s>", "<pad>")
    assert end_tokens(None, ["<|end|>"]) == ("<|end|>",)
    assert end_tokens() == COMMON_END_TOKENS
    with pytest.raises(ValueError, match="tokenizer '/no/such/tokenizer' cannot be loaded"):
        end_tokens("/no/such/tokenizer")
