"""Checks for this notebook's exercises (being written)."""

CHECKS = ()
MESSAGES = {}
