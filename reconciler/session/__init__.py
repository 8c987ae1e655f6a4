"""One account's session beneath the commands: its file and its live state read at once, the
plan made and signed, the account a saved plan names checked, the plan key chosen.

`plan`, `drift`, `comment` and `apply` run it for one account (`reconciler.cli`), and
`reconciler.accounts` runs it for each account of several. It connects through a `Connection`
(`reconciler.session.connection`) the caller hands in: the command line's options, which may
start the embedded sandbox, something this package never imports.
"""
