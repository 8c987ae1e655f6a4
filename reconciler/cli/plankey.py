"""The plan key: chosen once, at the edge, from the most stable setting there is.

`RECONCILER_PLAN_KEY` when set (the setting to use in CI: login tokens change every run), else
the static token (or the embedded sandbox's demo token), else the email and password. The key
signs a saved plan and keys the HMACs in it (`reconciler.plan.signing`); it is registered as a
secret like the token.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from reconciler import logs
from reconciler.plan.signing import PlanKey
from reconciler.service.client import ServiceClient
from reconciler.service.config import ConfigError, read_token

VARIABLE = "RECONCILER_PLAN_KEY"
#: Shorter than this, a key could be guessed from the HMACs a saved plan carries.
MIN_LENGTH = 16


def plan_key(client: ServiceClient | None, environ: Mapping[str, str] | None = None) -> PlanKey:
    """The key for saved plans: RECONCILER_PLAN_KEY, else the client's token."""
    env = os.environ if environ is None else environ
    explicit = env.get(VARIABLE)
    if explicit is not None:
        if not explicit.strip():
            raise ConfigError(
                f"{VARIABLE} is set but empty (a CI secret that does not exist is passed as '')",
                hint=f"set the {VARIABLE} secret, or unset the variable to key plans with "
                "the token",
            )
        if len(explicit) < MIN_LENGTH:
            raise ConfigError(
                f"{VARIABLE} is shorter than {MIN_LENGTH} characters",
                hint="use a long random value, e.g. `python -c 'import secrets; "
                "print(secrets.token_urlsafe(32))'`",
            )
        logs.register_secret(explicit)
        return PlanKey(explicit.encode(), VARIABLE)
    if client is None:
        raise ConfigError(
            f"this command needs the plan key: set {VARIABLE} (or RECONCILER_TOKEN), as for "
            "the `reconciler plan --out` that made the plan"
        )
    config = client.config
    if config.token is not None:
        return PlanKey(config.token.reveal().encode(), f"the token from {config.token_source}")
    assert config.credentials is not None, "a client has a token or credentials"
    credentials = config.credentials
    material = f"{credentials.email.casefold()}\n{credentials.password.reveal()}".encode()
    return PlanKey(material, f"the email and password from {credentials.source}")


def offline_plan_key(environ: Mapping[str, str] | None = None) -> PlanKey:
    """The plan key where no client is opened (`plan-compare`): the variable, else the token,
    read and checked as the client reads it."""
    env = os.environ if environ is None else environ
    if env.get(VARIABLE) is None:
        token, source = read_token(None, env, required=False)
        if token is not None:
            logs.register_secret(token.reveal())
            return PlanKey(token.reveal().encode(), f"the token from {source}")
    return plan_key(None, env)
