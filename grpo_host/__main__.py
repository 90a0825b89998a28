"""``python -m grpo_host`` is the ``grpo-host`` command (what ``accelerate launch -m grpo_host train ...`` runs)."""

from .cli import main

main()
