"""Checks for notebook 02, self-attention with trainable weights: SelfAttention_v1 and SelfAttention_v2
(ex1_self_attention), then book exercise 3.1, load_v2_weights_into_v1 (ex2_transfer_weights). Their probes are in
autograder.course.probes.self_attention; the module contract adds the classes' structure, device and properties.
"""

NOTEBOOK = "02_trainable_self_attention"
