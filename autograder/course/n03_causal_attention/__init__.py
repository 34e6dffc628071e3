"""Notebook 03, causal attention: the causal mask (ex1_causal_mask), the two masking routes (ex2_masking_routes),
CausalAttention (ex3_causal_attention), each folder with its probe, judge and declaration; the module contract
(autograder.course.module_contract) adds CausalAttention's structure, dropout, buffer and properties. Probes seed the
global RNG only inside `seeded`, which restores it: a notebook's own seeds stay valid.
"""

__all__ = ["NOTEBOOK"]

NOTEBOOK = "03_causal_attention"
