"""openenv_client: an OpenEnv server, stepped through openenv-core's own client, as the ``openenv`` environment."""
