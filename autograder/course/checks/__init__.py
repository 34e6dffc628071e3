"""Checks, one module per notebook. Each module exports CHECKS (tuple of Check) and MESSAGES."""
