"""Notebook 02, self-attention with trainable weights: SelfAttention_v1 and SelfAttention_v2 (ex1_self_attention),
then book exercise 3.1, load_v2_weights_into_v1 (ex2_transfer_weights), each folder with its probe, judge and
declaration; the module contract adds the classes' structure, device and properties.
"""

__all__ = ["NOTEBOOK"]

NOTEBOOK = "02_trainable_self_attention"
