from grpo_host import reward


@reward(name="scan_first", description="1.0 for a non-empty completion")
def scan_first(completion, **_):
    return float(bool(completion))


REWARD = scan_first
