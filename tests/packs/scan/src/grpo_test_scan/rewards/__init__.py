"""One reward per module; each module's ``REWARD`` is registered."""
