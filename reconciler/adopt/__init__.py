"""Adopt: write into the desired-state files what people changed in the live account.

The other way to settle drift: `apply` makes the account say what the files say; `adopt` makes
the files say what the account has, as an edit a pull request reviews (`reconciler.gitops`
proposes one from the drift job).
"""

from reconciler.adopt.files import AdoptRefused, adopt_path
from reconciler.adopt.model import Adopted, Adoption, NotAdopted, Variable
from reconciler.adopt.proposal import AdoptOptions
from reconciler.adopt.propose import propose

__all__ = [
    "AdoptOptions",
    "AdoptRefused",
    "Adopted",
    "Adoption",
    "NotAdopted",
    "Variable",
    "adopt_path",
    "propose",
]
