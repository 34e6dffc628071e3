"""Notebook 01, attention without trainable weights: one folder per exercise (or pair of exercises sharing a probe),
in the notebook's order, each with its probe, judge and declaration."""

__all__ = ["NOTEBOOK"]

NOTEBOOK = "01_attention_without_weights"
