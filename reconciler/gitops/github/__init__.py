"""GitHub, the CI flow's first forge: its REST client (`client`), its record of an account's
last apply (`deployments`), where a merge finds its reviewed plan (`runs`), and the adapter the
flow calls (`forge.GitHubForge`)."""

from reconciler.gitops.github.client import ACTIONS_BOT, GitHub, GitHubConfigError, GitHubError

__all__ = ["ACTIONS_BOT", "GitHub", "GitHubConfigError", "GitHubError"]
