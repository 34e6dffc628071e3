"""The contract every attention module exercise shares: declared once, applied by data.

A `ModuleSpec` (autograder.course.module_contract.probe) says, in plain fields, what an exercise's class promises: its
constructor, the parameters that constructor creates (names and shapes, qkv_bias either way), how it holds its
heads, the buffers that hold a causal mask, the input rank, the output features, whether it is causal and has
dropout. Every spec gets the same checks:

  <exercise>.structure   parameters named and shaped as the constructor promises and nothing else trainable
                         (no stray bias when qkv_bias=False, no mask as a parameter); the output is a tensor of
                         the promised shape and the input's dtype
  <exercise>.modes       (modules with dropout) eval() is deterministic and equals the same weights with
                         dropout 0; train() drops attention weights after the softmax at rate p and scales the
                         kept ones by 1/(1-p), judged statistically (never an exact mask)
  <exercise>.device      every mask is a persistent buffer that follows .to(dtype) and .to(device) (a GPU when
                         there is one, else the shape-only meta device); forward runs there and makes no tensor
                         that stays behind on the CPU
  <exercise>.properties  inputs shorter than context_length, batch independence, causality, gradients reach
                         every parameter, the input left as it was

Everything is judged against the student's own module (another call, another mode, another sample), never
against an exact random mask: a mistake in the forward pass costs the value checks, not these. The cases are in
`cases`, the judges in `judge`, the checks and their messages in `declaration`, the probes in `probe`.
"""

__all__: list[str] = []
