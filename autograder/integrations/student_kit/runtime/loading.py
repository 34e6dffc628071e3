"""Stored weights into the student's module, by parameter name.

The live checks read the student's own weights and run the reference with them; the kit cannot run the
reference, so it does the opposite: it copies the weights the expectations were computed with into the
student's module. A raw (d_in, d_out) parameter used as `x @ W` gets the transpose of a stored nn.Linear
weight. Names or shapes that do not fit are left alone: the judge names what it expected, as the live
check does. Two bias cases keep the output what the live check would compare:
- the stored weights have a bias the student's layer lacks: a forward hook adds it to that layer's output
  (exactly what nn.Linear's bias does);
- the student's layer has a bias the stored weights lack: it is zeroed (the stored case has none).
"""

import torch


def parameter_shapes(module):
    """{name: shape} of the module's parameters and buffers, read before anything is loaded."""
    shapes = {name: tuple(value.shape) for name, value in module.named_parameters()}
    shapes.update({name: tuple(value.shape) for name, value in module.named_buffers()})
    return shapes


def load_stored_weights(module, weights):
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


def _add_missing_bias(module, layer_name, bias):
    try:
        layer = module.get_submodule(layer_name)
    except AttributeError:
        return
    layer.register_forward_hook(lambda _layer, _inputs, output: output + bias.to(output.dtype))
