"""Wrong counters a learner writes for count_parameters, each the reference with one mistake: run on the case's own
module, the one that gives the student's count proves the mistake (Evidence.VARIANT). Declaration side only: the
grading child never imports it."""

from collections.abc import Callable, Sequence

from torch import nn

__all__ = ["wrong_counts"]


def _trainable(module: nn.Module) -> int:
    return sum(p.numel() for p in module.parameters() if p.requires_grad)


def with_buffers(module: nn.Module) -> int:
    return _trainable(module) + sum(b.numel() for b in module.buffers())


def with_buffers_and_frozen(module: nn.Module) -> int:
    """Two mistakes at once; named for the buffers, and once those are gone the frozen ones are named."""
    return sum(p.numel() for p in module.parameters()) + sum(b.numel() for b in module.buffers())


def with_frozen(module: nn.Module) -> int:
    return sum(p.numel() for p in module.parameters())


def state_dict_values(module: nn.Module) -> int:
    """Every tensor the state_dict holds: frozen parameters, persistent buffers and a shared one under each name."""
    return sum(t.numel() for t in module.state_dict().values())


def children_only(module: nn.Module) -> int:
    """Walks module.children(): a parameter registered on the module itself is never reached."""
    return sum(p.numel() for child in module.children() for p in child.parameters() if p.requires_grad)


def each_module_recursively(module: nn.Module) -> int:
    """Sums parameters() of every module of modules(): a nested parameter counts once per module above it."""
    return sum(p.numel() for m in module.modules() for p in m.parameters() if p.requires_grad)


def every_name(module: nn.Module) -> int:
    """named_parameters(remove_duplicate=False): a shared parameter counts once per name it has."""
    return sum(p.numel() for _, p in module.named_parameters(remove_duplicate=False) if p.requires_grad)


def each_module_own(module: nn.Module) -> int:
    """Each module's own parameters (recurse=False) over modules(): a tensor two modules hold counts twice."""
    return sum(p.numel() for m in module.modules() for p in m.parameters(recurse=False) if p.requires_grad)


def linear_layers_only(module: nn.Module) -> int:
    """Weights and biases of the nn.Linear layers only: other layers and parameters of their own are missed."""
    return sum(p.numel() for m in module.modules() if isinstance(m, nn.Linear)
               for p in m.parameters(recurse=False) if p.requires_grad)


WRONG_COUNTERS: tuple[tuple[str, Callable[[nn.Module], int]], ...] = (
    ("counts_buffers", with_buffers),
    ("counts_buffers", with_buffers_and_frozen),
    ("counts_frozen", with_frozen),
    ("counts_state_dict", state_dict_values),
    ("counts_children_only", children_only),
    ("counts_nested_twice", each_module_recursively),
    ("counts_shared_twice", every_name),
    ("counts_shared_twice", each_module_own),
    ("counts_linear_only", linear_layers_only),
)


def wrong_counts(modules: Sequence[nn.Module]) -> list[tuple[str, list[int]]]:
    """(mistake, its count on each of `modules`) for each wrong counter."""
    return [(mistake, [counter(module) for module in modules]) for mistake, counter in WRONG_COUNTERS]
