"""Checks for notebook 01, attention without trainable weights: one module per exercise (or pair of exercises), in
the notebook's order, each with its exercises, checks and messages. Their probes are in autograder.course.probes.basics.
"""

NOTEBOOK = "01_attention_without_weights"
