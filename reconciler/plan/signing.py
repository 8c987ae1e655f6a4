"""The plan key and what it signs: every keyed hash of a saved plan, and the plan as a whole.

The key comes from one setting, chosen once at the edge (`reconciler.session.plankey`):
`RECONCILER_PLAN_KEY` when set, else the static token (never a password). Each use
gets its own key derived from it (HMAC of a label), so a value hashed for one purpose says
nothing about another. A saved plan records which setting keyed it (its name, never a value)
and a key check (the HMAC of a fixed label), so a plan applied with another key is refused
saying which setting differs, and an edited plan is refused as edited.
"""

from __future__ import annotations

import hashlib
import hmac
import json
from dataclasses import dataclass
from typing import Any

from reconciler.errors import Refused

_CHECK_LABEL = b"reconciler plan-key check v1"
_DOCUMENT_LABEL = b"reconciler saved-plan document v1"
PREFIX = "hmac-sha256:"


class UntrustedPlan(Refused):
    """The saved plan was edited, or made with another key: nothing was applied."""


@dataclass(frozen=True, slots=True)
class PlanKey:
    """The secret that keys a saved plan, and the name of the setting it came from."""

    material: bytes
    setting: str  # "RECONCILER_PLAN_KEY", "the token from ..."

    def derive(self, label: bytes) -> bytes:
        """A key for one purpose (HKDF-extract style: HMAC(material, label))."""
        return hmac.new(self.material, label, hashlib.sha256).digest()

    @property
    def check(self) -> str:
        """A value that tells keys apart without revealing them."""
        return PREFIX + hmac.new(self.material, _CHECK_LABEL, hashlib.sha256).hexdigest()[:16]

    def __repr__(self) -> str:
        return f"PlanKey(setting={self.setting!r})"


def canonical(document: Any) -> bytes:
    """The one serialisation the whole-plan HMAC covers: sorted keys, no spaces, UTF-8."""
    return json.dumps(
        document, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
    ).encode("utf-8", "surrogatepass")  # a lone surrogate (an edited plan) fails the MAC


def sign(document: dict[str, Any], key: PlanKey) -> str:
    """The HMAC of everything in `document` but its `mac`."""
    unsigned = {name: value for name, value in document.items() if name != "mac"}
    digest = hmac.new(key.derive(_DOCUMENT_LABEL), canonical(unsigned), hashlib.sha256)
    return PREFIX + digest.hexdigest()


#: An evidence record of dual control (`reconciler.accounts.records`) is signed apart from plans:
#: a record can never be passed off as a saved plan, nor a plan as a record.
_RECORD_LABEL = b"reconciler evidence record v1"


def sign_record(document: dict[str, Any], key: PlanKey) -> str:
    """The HMAC of everything in an evidence record but its `mac`."""
    unsigned = {name: value for name, value in document.items() if name != "mac"}
    digest = hmac.new(key.derive(_RECORD_LABEL), canonical(unsigned), hashlib.sha256)
    return PREFIX + digest.hexdigest()


def record_problem(document: dict[str, Any], key: PlanKey) -> str | None:
    """Why an evidence record cannot be trusted with this key (None: it can): no signature,
    another key's (named by its key check, so a rotated key is told from an edit), or
    changed after it was signed."""
    mac, signed_with = document.get("mac"), document.get("key")
    if not isinstance(mac, str) or not isinstance(signed_with, dict):
        return "it carries no signature"
    check = signed_with.get("check")
    if not isinstance(check, str) or not hmac.compare_digest(check, key.check):
        return f"it was signed with another plan key (key id {str(check)[:40]}), not {key.check}"
    if not hmac.compare_digest(mac, sign_record(document, key)):
        return "its signature does not match: it was changed after it was signed"
    return None


def verify(document: dict[str, Any], key: PlanKey, *, name: str) -> None:
    """Refuse a document that another key signed, or that was changed after it was signed."""
    signed_with = document.get("key")
    if not isinstance(signed_with, dict) or not isinstance(document.get("mac"), str):
        raise UntrustedPlan(
            f"{name} carries no signature: it was not written by `reconciler plan --out`, or "
            "by a version before saved plans were signed; nothing was applied",
            hint="run `reconciler plan --out` again",
        )
    setting, check = signed_with.get("setting"), signed_with.get("check")
    if not isinstance(check, str) or not hmac.compare_digest(check, key.check):
        made_with = setting if isinstance(setting, str) else "another key"
        raise UntrustedPlan(
            f"{name} was signed with a different plan key ({made_with}) than this run's "
            f"({key.setting}): nothing was applied",
            hint="apply with the same RECONCILER_PLAN_KEY (or token, or credentials) the plan "
            "was made with; in CI, set RECONCILER_PLAN_KEY as a secret for both jobs",
        )
    if not hmac.compare_digest(str(document["mac"]), sign(document, key)):
        raise UntrustedPlan(
            f"{name} was changed after it was made (its signature does not match): "
            "nothing was applied",
            hint="never edit a saved plan; run `reconciler plan --out` again",
        )
