"""The reconciler's version and where its users report a bug: the one place each is written
(pyproject.toml reads the version from here; CHANGELOG.md says what each release changed).

A constant, not the installed package's metadata: `importlib.metadata` costs every command that
sends a User-Agent about 40 ms of its start, before its first request.

Versions are MAJOR.MINOR.PATCH: MINOR moves with each release of new behaviour (one a wave of
work), PATCH with a release of fixes alone; a release is the commit tagged `vVERSION`.
"""

VERSION = "0.6.0"

#: Where a bug is reported, as hints name it (the docs' repository; OWNER is the copy installed).
ISSUE_TRACKER = (
    "the reconciler's issue tracker, https://github.com/OWNER/reconciler/issues (OWNER: the "
    "repository you install it from)"
)
