"""The plan key: chosen once, at the edge, from the most stable setting there is.

`RECONCILER_PLAN_KEY` when set (the setting to use in CI: login tokens change every run), else
the static token (or the embedded sandbox's demo token). Never the password: everything keyed
by it (the key check, every HMAC of a saved plan) would let a reader of the artifact test
password guesses offline at the speed of SHA-256, so with only an email and password a saved
plan is refused until `RECONCILER_PLAN_KEY` is set. The key signs a saved plan and keys the
HMACs in it (`reconciler.plan.signing`); it is registered as a secret like the token.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from reconciler import logs
from reconciler.plan.signing import PlanKey
from reconciler.service.client import ServiceClient
from reconciler.service.config import ConfigError, SettingNames, read_token

VARIABLE = "RECONCILER_PLAN_KEY"
#: Shorter than this (in bytes), a key could be guessed from the HMACs a saved plan carries.
MIN_BYTES = 32


def plan_key(
    client: ServiceClient | None,
    environ: Mapping[str, str] | None = None,
    names: SettingNames | None = None,
) -> PlanKey:
    """The key for saved plans: RECONCILER_PLAN_KEY, else the client's token; `names`, where
    the settings are given (default: the client's, else one account's options)."""
    env = os.environ if environ is None else environ
    named = names or (client.config.names if client is not None else SettingNames())
    explicit = env.get(VARIABLE)
    if explicit is not None:
        if not explicit.strip():
            raise ConfigError(
                f"{named.plan_key} is set but empty (a CI secret that does not exist is passed "
                "as '')",
                hint=f"set the {named.plan_key} secret, or unset the variable to key plans with "
                "the token",
            )
        if len(explicit.encode()) < MIN_BYTES:
            raise ConfigError(
                f"{named.plan_key} is shorter than {MIN_BYTES} bytes",
                hint="use a long random value, e.g. `python -c 'import secrets; "
                "print(secrets.token_urlsafe(32))'`",
            )
        logs.register_secret(explicit)
        return PlanKey(explicit.encode(), VARIABLE)
    if client is None:
        raise ConfigError(
            f"this command needs the plan key: set {named.plan_key} (or {named.token}), as for "
            "the `reconciler plan --out` that made the plan"
        )
    config = client.config
    if config.token is not None:
        return PlanKey(config.token.reveal().encode(), f"the token from {config.token_source}")
    assert config.credentials is not None, "a client has a token or credentials"
    raise ConfigError(
        f"a saved plan needs {named.plan_key} when the reconciler signs in with an email and "
        "password "
        f"({config.credentials.source}): login tokens change every run, and nothing in a plan "
        "may be keyed by the password, which a reader of the plan could then test guesses "
        "against",
        hint=f"set {named.plan_key} to a long random value (at least {MIN_BYTES} bytes, e.g. "
        "`python -c 'import secrets; print(secrets.token_urlsafe(32))'`), the same for the "
        "plan and the apply jobs, as the README's CI recipe does",
    )


def offline_plan_key(
    environ: Mapping[str, str] | None = None, names: SettingNames | None = None
) -> PlanKey:
    """The plan key where no client is opened (`plan-compare`, `apply DIR` before its first
    request): the variable, else the token, read and checked as the client reads it."""
    env = os.environ if environ is None else environ
    if env.get(VARIABLE) is None:
        token, source = read_token(None, env, required=False, names=names)
        if token is not None:
            logs.register_secret(token.reveal())
            return PlanKey(token.reveal().encode(), f"the token from {source}")
    return plan_key(None, env, names)
