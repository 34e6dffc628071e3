"""The weights a case's expectations were computed with, loaded into the student's module by parameter name.

The full kit reads the student's own weights and computes the expectations with them; the student kit cannot run
the reference, so it does the opposite: its stored cases carry the weights the expectations were computed with
(`LOAD_WEIGHTS`), and the probe copies them into the student's module. A full-kit case never carries them.

A raw (d_in, d_out) parameter used as `x @ W` gets the transpose of a stored nn.Linear weight. Names or shapes that
do not fit are left alone: the judge names what it expected, as the full kit does. Two bias cases keep the output
what the full kit would compare:
- the stored weights have a bias the student's layer lacks: a forward hook adds it to that layer's output
  (exactly what nn.Linear's bias does);
- the student's layer has a bias the stored weights lack: it is zeroed (the stored case has none).
"""

from collections.abc import Mapping
from typing import Any, TypeVar

import torch
from torch import Tensor, nn

__all__ = ["LOAD_WEIGHTS", "load_case_weights", "load_stored_weights"]

ModuleT = TypeVar("ModuleT", bound=nn.Module)

LOAD_WEIGHTS = "load_weights"  # the case key of {qualified name: tensor}, nn.Linear layout


def load_case_weights(module: ModuleT, case: Mapping[str, Any]) -> ModuleT:
    """The module, holding the case's stored weights when it carries any (student kit); as it was otherwise."""
    weights = case.get(LOAD_WEIGHTS)
    if weights is not None:
        load_stored_weights(module, weights)
    return module


def load_stored_weights(module: nn.Module, weights: Mapping[str, Tensor]) -> None:
    """Copy `weights` ({qualified name: tensor}, nn.Linear layout) into `module`; see the module docstring."""
    parameters = dict(module.named_parameters())
    with torch.no_grad():
        for name, value in weights.items():
            layer_name, _, kind = name.rpartition(".")
            target, stored = parameters.get(name), value
            if target is None and kind == "weight" and layer_name in parameters:
                target, stored = parameters[layer_name], value.T  # a raw parameter used as x @ W
            if target is not None:
                if tuple(target.shape) == tuple(stored.shape):
                    target.copy_(stored.to(target.dtype))
            elif kind == "bias":
                _add_missing_bias(module, layer_name, value)
        for name, parameter in parameters.items():
            layer_name, _, kind = name.rpartition(".")
            if kind == "bias" and f"{layer_name}.weight" in weights and name not in weights:
                parameter.zero_()


def _add_missing_bias(module: nn.Module, layer_name: str, bias: Tensor) -> None:
    try:
        layer = module.get_submodule(layer_name)
    except AttributeError:
        return
    layer.register_forward_hook(lambda _layer, _inputs, output: output + bias.to(output.dtype))
