"""Notebook 04, multi-head attention: stacked heads (ex1_wrapper), splitting and merging heads
(ex2_split_merge), MultiHeadAttention (the book's forward, then the padding mask as an exercise of its own,
ex3_multi_head_attention), our weights inside nn.MultiheadAttention (ex4_torch_equivalence) and counting parameters
(book exercise 3.3, ex5_parameter_counts); what several of their declarations share is in `shared`.

The folders' probes build the student's modules under a fixed seed (without disturbing the
notebook's own RNG state) and return outputs plus `state_of(module)`; judges rerun the reference
(`variants.attention`, `solutions`) with the student's own weights, so the order in which the student created
layers never matters. The module contract (autograder.course.module_contract) adds the wrapper's and
MultiHeadAttention's structure, dropout, buffers and properties.
"""

__all__ = ["NOTEBOOK"]

NOTEBOOK = "04_multi_head_attention"
