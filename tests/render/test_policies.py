"""Policies written for Terraform plans run unchanged on `reconciler plan --format json`.

A real Rego engine (regopy, rego-cpp's Python binding, from PyPI) evaluates three typical
conftest-style policies over the plan of the demo account: deny any delete of a managed
resource, count the creates, and restrict a field's values in `planned_values`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from regopy import Interpreter

from reconciler.sandbox import SandboxServer
from tests.cli import ROOT, reconciler

POLICY = """
package terraform
import rego.v1

deny_delete contains rc.index if {
  some rc in input.resource_changes
  rc.mode == "managed"
  "delete" in rc.change.actions
}

creates := count([rc |
  some rc in input.resource_changes
  rc.mode == "managed"
  rc.change.actions == ["create"]
])

allowed_countries := {"GB", "US"}

deny_country contains r.index if {
  some r in input.planned_values.root_module.resources
  r.type == "worker"
  not allowed_countries[r.values.countryIso]
}
"""


def _evaluate(plan: dict[str, Any]) -> dict[str, Any]:
    rego = Interpreter()
    rego.add_module("policy", POLICY)
    rego.set_input_term(json.dumps(plan))  # JSON is a Rego term
    verdict = {}
    for name, rule in (("d", "deny_delete"), ("c", "creates"), ("k", "deny_country")):
        output = rego.query(f"{name} = data.terraform.{rule}")
        assert output.ok(), output
        verdict[name] = json.loads(str(output.binding(name)))  # the binding, as JSON
    return verdict


def _plan(tmp_path: Path, text: str | None = None) -> dict[str, Any]:
    desired = ROOT / "examples" / "quickstart.yaml"
    if text is not None:
        desired = tmp_path / "desired.yaml"
        desired.write_text(text)
    with SandboxServer(seed=ROOT / "examples" / "sandbox-seed.yaml") as server:
        result = reconciler("plan", str(desired), "--format", "json", server=server)
    assert result.returncode == 0, result.stderr
    document: dict[str, Any] = json.loads(result.stdout)
    return document


def test_terraform_policies_run_unchanged(tmp_path: Path) -> None:
    verdict = _evaluate(_plan(tmp_path))
    assert list(verdict["d"]) == ["ENG-006"]  # the inactivation is a delete of a managed resource
    assert verdict["c"] == 1  # ENG-004 is invited
    assert list(verdict["k"]) == []  # every planned worker is in GB or US


def test_a_field_restriction_catches_a_planned_value(tmp_path: Path) -> None:
    text = (
        (ROOT / "examples" / "quickstart.yaml")
        .read_text()
        .replace(
            "countryIso: US\n  - externalId: ENG-005", "countryIso: FR\n  - externalId: ENG-005"
        )
    )
    assert "countryIso: FR" in text
    verdict = _evaluate(_plan(tmp_path, text))
    assert list(verdict["k"]) == ["ENG-004"]
