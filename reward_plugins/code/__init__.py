"""The ``code`` reward pack: completions' Python run against the row's tests in a bubblewrap sandbox.

``reward`` holds the reward and its registration hook, ``sandbox`` the
isolation layer (bubblewrap, one warm sandbox per worker process), and
``runner`` the fork server that runs inside it.
"""
