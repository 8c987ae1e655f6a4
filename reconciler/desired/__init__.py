"""The desired state: the YAML file people keep in git, loaded, validated and modelled."""

from reconciler.desired.load import load_desired_state
from reconciler.desired.model import DesiredState
from reconciler.desired.problems import InvalidDesiredState, Location, Problem

__all__ = ["DesiredState", "InvalidDesiredState", "Location", "Problem", "load_desired_state"]
