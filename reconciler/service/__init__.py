"""The service client: the only code that speaks HTTP to the workforce service.

- `config`: where the service is and how to talk to it (`resolve_config`).
- `client`: `ServiceClient`, one method per endpoint, typed answers.
- `transport`: one request from any thread, with retries, errors and read-only mode.
- `paging`: every item of a paged list once, whatever the page numbering.
- `decode` / `encode`: the service's JSON to typed values and back.
- `errors`: what can go wrong; `models`: the typed values the rest of the reconciler uses.

Importing this package imports nothing else: the core reads `models` without pulling in httpx.
"""
