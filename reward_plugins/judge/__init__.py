"""judge: an LLM judge over any OpenAI-compatible chat-completions server.

``rewards`` holds the four rewards, their parameters and the registration
hook (the entry point names it); ``client`` makes the requests
(concurrency, rate limits, retries, the deadline), ``cache`` keeps replies,
and ``prompts`` builds what the judge is asked and reads its verdict back.
This package imports no HTTP stack, so listing rewards stays fast.
"""
