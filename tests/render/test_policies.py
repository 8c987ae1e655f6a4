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


KEPT_POLICY = """
package terraform
import rego.v1

changed contains rc.address if {
  some rc in input.resource_changes
}

# Workers of the planned state that no change touches: Terraform's planned_values lists every
# resource of the planned state, those left as they are included.
kept contains r.index if {
  some r in input.planned_values.root_module.resources
  r.type == "worker"
  not changed[r.address]
}

planned_webhook := [r.values.url |
  some r in input.planned_values.root_module.resources
  r.type == "webhook"
]
"""


def test_planned_values_hold_the_workers_and_the_webhook_the_plan_leaves_alone(
    tmp_path: Path,
) -> None:
    plan = _plan(tmp_path)
    rego = Interpreter()
    rego.add_module("kept", KEPT_POLICY)
    rego.set_input_term(json.dumps(plan))
    kept = rego.query("k = data.terraform.kept")
    assert kept.ok(), kept
    # ENG-004 is invited and ENG-006 inactivated; ENG-002 drifted (reported, not changed).
    assert sorted(json.loads(str(kept.binding("k")))) == [
        "ENG-001",
        "ENG-002",
        "ENG-003",
        "ENG-005",
    ]
    resources = plan["planned_values"]["root_module"]["resources"]
    drifted = next(r for r in resources if r["address"] == 'worker["ENG-002"]')
    assert drifted["values"]["jobTitle"] == "Engineer"  # the live value: drift is not fixed
    assert 'worker["ENG-006"]' not in {r["address"] for r in resources}  # inactivated

    # With the webhook already as the file wants it, it is still in the planned state.
    text = (ROOT / "examples" / "quickstart.yaml").read_text()
    unchanged = text.replace("event_types: [KYC, PAYMENT]", "event_types: [KYC]")
    assert unchanged != text
    webhook = rego_webhook(_plan(tmp_path, unchanged))
    assert webhook == ["https://hooks.example.com/workforce"]


def rego_webhook(plan: dict[str, Any]) -> list[str]:
    rego = Interpreter()
    rego.add_module("kept", KEPT_POLICY)
    rego.set_input_term(json.dumps(plan))
    output = rego.query("w = data.terraform.planned_webhook")
    assert output.ok(), output
    assert all(rc["type"] != "webhook" for rc in plan["resource_changes"])
    return list(json.loads(str(output.binding("w"))))
