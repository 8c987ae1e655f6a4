"""The service client: the only code that speaks HTTP to the workforce service."""
