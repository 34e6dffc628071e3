"""The reference with one mistake, as code a check's own probe can run: whether a check that compares no numbers
with the reference (the future leaks in, heads stay apart, a contract preview, a dtype) fails for a mistake's
variant the way it fails for the learner's code.

A value check names a mistake when its variant (autograder.course.variants) gives the learner's numbers; a property
check compares no numbers, so nothing there names a mistake. Yet the same mistake may break the property too: a
softmax over the queries lets the future in. Here each such mistake of an exercise is the reference with that one
change (a knob of variants.attention, or one line of the reference's module or function), and `failing_alike` runs
it through the check's probe and judge on the same case: the verdicts it gets (message and fields) or the errors it
raises are handed over in plain form (the student kit stores them for its public cases), and a mistake another check
proves explains the learner's failure only where its variant fails with the very same verdict or error
(autograder.checking.results, autograder.checking.attempt). Full kit only (it needs the reference).
"""

import functools
from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import Any

import torch
from torch import Tensor, nn

from attnkit import solutions
from autograder.checking.case_memo import remembered
from autograder.checking.check_types import Verdict
from autograder.checking.expectations import Expectations
from autograder.checking.results import error_text, verdict_text
from autograder.checking.tensor_trace import probe_with_raised_operands
from autograder.course import variants
from autograder.course.mistakes import MISTAKES

__all__ = ["FAITHFUL", "VALUE_VARIANTS", "failing_alike", "faithful"]

Namespace = Mapping[str, Any]
Variant = tuple[str, Namespace]  # (the mistake's id, the namespace the check's probe runs on)
FILLS = (("mask_fill_zero", 0.0),)  # a finite fill a learner types whatever the weights: 0 (fitted ones are theirs)


def own_weights(module: nn.Module) -> dict[str, Tensor]:
    """The module's layers as variants.attention reads them (W_query.weight, ..., out_proj.bias): its own
    parameters, so that gradients reach them."""
    return dict(module.named_parameters())


def causal_attention_with(knobs: Mapping[str, Any]) -> type[nn.Module]:
    """The reference CausalAttention (its constructor, weights and buffer) whose forward makes one value mistake."""
    class CausalAttention(solutions.CausalAttention):  # type: ignore[misc]
        def forward(self, x: Tensor) -> Tensor:
            return variants.attention(x, own_weights(self), **knobs)  # type: ignore[return-value]

    return CausalAttention


def multi_head_attention_with(knobs: Mapping[str, Any]) -> type[nn.Module]:
    """The reference MultiHeadAttention whose forward makes one value mistake."""
    class MultiHeadAttention(solutions.MultiHeadAttention):  # type: ignore[misc]
        def forward(self, x: Tensor, attention_mask: Tensor | None = None) -> Tensor:
            return variants.attention(x, own_weights(self), num_heads=self.num_heads,  # type: ignore[return-value]
                                      attention_mask=attention_mask, **knobs)

    return MultiHeadAttention


def wrapper_joined(join: Callable[[list[Tensor]], Tensor]) -> type[nn.Module]:
    """The reference MultiHeadAttentionWrapper whose forward joins its heads' outputs with `join`."""
    class MultiHeadAttentionWrapper(solutions.MultiHeadAttentionWrapper):  # type: ignore[misc]
        def forward(self, x: Tensor) -> Tensor:
            return join([head(x) for head in self.heads])

    return MultiHeadAttentionWrapper


class WrapperWithPlainList(solutions.MultiHeadAttentionWrapper):  # type: ignore[misc]
    """The reference MultiHeadAttentionWrapper with its heads kept in a plain Python list."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        heads: list[nn.Module] = list(self._modules.pop("heads") or ())  # registered: only then a plain attribute
        self.heads = heads


class WrapperIntoZeros(solutions.MultiHeadAttentionWrapper):  # type: ignore[misc]
    """The reference MultiHeadAttentionWrapper whose heads' outputs are written into a fresh torch.zeros buffer:
    float32 on the CPU whatever the input's dtype and device (tensor_created_on_cpu)."""

    def forward(self, x: Tensor) -> Tensor:
        joined = super().forward(x)
        written = torch.zeros(joined.shape)
        written[:] = joined
        return written


def _wrapper_variants() -> tuple[Variant, ...]:
    """The wrapper's mistakes written as the reference module with one line changed: the heads joined along the
    tokens or stacked (each axis a learner may stack along), kept in a plain list, or written into a buffer made on
    the CPU. Each is the reference's own code elsewhere, so it behaves as the learner's on every check, another
    device included."""
    class_name = "MultiHeadAttentionWrapper"
    joins: list[tuple[str, Callable[[list[Tensor]], Tensor]]] = [
        ("heads_on_token_axis", lambda heads: torch.cat(heads, dim=heads[0].dim() - 2))]
    joins += [("heads_stacked", functools.partial(_stacked, dim=dim)) for dim in (-1, -2, 1, 0)]
    found: list[Variant] = [(name, MappingProxyType({class_name: wrapper_joined(join)})) for name, join in joins]
    return (*found, ("heads_plain_list", MappingProxyType({class_name: WrapperWithPlainList})),
            ("tensor_created_on_cpu", MappingProxyType({class_name: WrapperIntoZeros})))


class SelfAttentionV1IntoZeros(solutions.SelfAttention_v1):  # type: ignore[misc]
    """The reference SelfAttention_v1 whose context vectors are written into a fresh torch.zeros buffer: float32 on
    the CPU whatever the module's dtype and device (forward_tensor_on_cpu)."""

    def forward(self, x: Tensor) -> Tensor:
        context = super().forward(x)
        written = torch.zeros(context.shape)
        written[:] = context
        return written


def renormalised_without_keepdim(attn_weights: Tensor) -> Tensor:
    """The reference causal_weights_renormalised whose row sums drop the summed axis (row_sums_without_keepdim)."""
    num_tokens = attn_weights.shape[-1]
    keep = torch.tril(torch.ones(num_tokens, num_tokens, dtype=attn_weights.dtype, device=attn_weights.device))
    masked = attn_weights * keep
    return masked / masked.sum(dim=-1)


def softmax_unshifted(x: Tensor, dim: int = -1) -> Tensor:
    """The reference softmax_stable without its shift by the maximum (naive_softmax_overflow)."""
    exponentials = torch.exp(x)
    return exponentials / exponentials.sum(dim=dim, keepdim=True)


def normalised_without_exp_naive(x: Tensor, dim: int = 0) -> Tensor:
    """softmax_naive dividing the scores by their sum, no exponential taken (normalised_without_exp): its `dim`
    defaults to the exercise's own axis, 0."""
    return x / x.sum(dim=dim, keepdim=True)


def normalised_without_exp_stable(x: Tensor, dim: int = -1) -> Tensor:
    """softmax_stable dividing the scores by their sum (normalised_without_exp): its `dim` defaults to the last."""
    return x / x.sum(dim=dim, keepdim=True)


def _stacked(heads: list[Tensor], dim: int) -> Tensor:
    return torch.stack(heads, dim=dim)


def _variants(exercise: str, class_name: str, with_knobs: Callable[[Mapping[str, Any]], type[nn.Module]],
              ) -> tuple[Variant, ...]:
    """The exercise's value mistakes (those the table says apply to it), each as a namespace holding its class."""
    applies = {mistake.id for mistake in MISTAKES if exercise in mistake.exercises}
    knobs = [(name, dict(turned)) for name, turned in variants.ATTENTION_MISTAKES if name in applies]
    knobs += [(name, {"fill": fill}) for name, fill in FILLS if name in applies]
    return tuple((name, MappingProxyType({class_name: with_knobs(turned)})) for name, turned in knobs)


VALUE_VARIANTS: Mapping[str, tuple[Variant, ...]] = MappingProxyType({
    "causal_attention": _variants("causal_attention", "CausalAttention", causal_attention_with),
    "multi_head_attention": _variants("multi_head_attention", "MultiHeadAttention", multi_head_attention_with),
    "mha_wrapper": _wrapper_variants(),
    "self_attention_v1": (("forward_tensor_on_cpu", MappingProxyType({"SelfAttention_v1": SelfAttentionV1IntoZeros})),),
    # The from-scratch rules judge the gradient on vectors: an unshifted softmax's is nan where its values are.
    "softmax_naive": (("normalised_without_exp", MappingProxyType({"softmax_naive": normalised_without_exp_naive})),),
    "softmax_stable": (("naive_softmax_overflow", MappingProxyType({"softmax_stable": softmax_unshifted})),
                       ("normalised_without_exp", MappingProxyType({"softmax_stable": normalised_without_exp_stable}))),
    "masking_routes": (("row_sums_without_keepdim", MappingProxyType({
        "causal_weights_renormalised": renormalised_without_keepdim})),),
})
# The module contract's properties each exercise's variants are faithful on. The functional ones (variants.attention)
# drop nothing in training and make their mask on the CPU: only where dropout is 0 and the device the CPU (the
# properties) do they fail as the reference with that mistake would. The wrapper's and v1's are the reference's own
# code with one line changed.
FAITHFUL: Mapping[str, frozenset[str]] = MappingProxyType({
    "causal_attention": frozenset({"properties"}),
    "multi_head_attention": frozenset({"properties"}),
    "mha_wrapper": frozenset({"structure", "modes", "device", "properties", "state"}),
    "self_attention_v1": frozenset({"structure", "device", "properties", "state"}),
})


def faithful(exercise: str, property_name: str) -> bool:
    """Whether the exercise's variants fail the contract's `property_name` as the reference with their mistake."""
    return property_name in FAITHFUL.get(exercise, frozenset())


def failing_alike(exercise: str, probe: Callable[[Namespace, Any], Any],
                  judge: Callable[[Any, Any, Expectations], Verdict],
                  expect: Callable[[Any, Any], Expectations], case: Any) -> Callable[[], list[list[str]]]:
    """For Expectations.computed: the verdict each of the exercise's value variants gets from the check (`probe`,
    `judge`, `expect` its own) on `case`, in plain form ([mistake, message key, fields...]: verdict_text), or the
    error it raised there ([mistake, "raised", ...]: error_text), for every variant that fails it; computed when
    asked."""
    def computed() -> list[list[str]]:
        found = []
        for mistake, namespace in VALUE_VARIANTS.get(exercise, ()):
            data = probe_with_raised_operands(probe, namespace, case)
            if not isinstance(data, dict):
                continue
            if isinstance(data.get("error"), dict):  # the error as the learner's is compared: numbers and shapes
                found.append([mistake, *error_text(data["error"])])
                continue
            try:
                verdict = judge(data, case, expect(data, case))
            except Exception:  # noqa: BLE001 - a variant the judge cannot read proves nothing either way
                continue
            if not verdict.passed:
                found.append([mistake, *verdict_text(verdict)])
        return found
    return lambda: remembered("failing_alike", exercise, (probe, judge, expect), case, computed)
