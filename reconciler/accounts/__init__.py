"""Several accounts from one repository: the accounts file, the selection, and the runs.

The command line parses the selection options into an `AccountOptions` (`options`) and calls
one function here: `validate.validate_accounts`, `plans.plan_accounts`,
`saved.apply_accounts` or `saved.saved_parts`. Each account runs the single-account session
(`reconciler.session`) with its own environment (`environment`), side by side (`run`, spread
over processes by `spread`); the outputs are joined in the accounts file's order (`combined`).
"""
