"""The module contract's cases: what a spec promises for one case (parameters, output shape) and the cases of
each contract check. Plain data and arithmetic: the spec answers every question about the module's layout.
"""

import random

from autograder.course.module_contract.probe import ContractCase, ModuleSpec

__all__ = [
    "DROPOUT_BATCH", "DROPOUT_TOKENS", "device_cases", "modes_cases", "properties_cases", "state_cases",
    "structure_cases",
]

DROPOUT_TOKENS = 24
DROPOUT_BATCH = 16  # 16 · 24·25/2 = 4800 visible weights per head: one standard deviation of the zero share <= 0.0073


def contract_case(spec: ModuleSpec, rng: random.Random, *, num_tokens: int | None = None, batch: int | None = None,
                  qkv_bias: bool | None = None, dtype: str = "float32") -> ContractCase:
    """A case: d_in != d_out and != head_dim, head_dim >= 2, num_tokens below context_length."""
    num_heads = rng.randint(2, 3) if spec.heads.many else 1
    head_dim = rng.randint(2, 5)
    d_out = spec.heads.d_out(head_dim, num_heads)
    num_tokens = num_tokens or rng.randint(3, 9)
    return {
        "seed": rng.randrange(2**31 - 100),
        "init_seed": rng.randrange(2**31),
        "batch": batch or rng.randint(2, 3),
        "num_tokens": num_tokens,
        "context_length": num_tokens + rng.randint(1, 5),
        "d_in": rng.choice([d for d in range(2, 10) if d not in (d_out, head_dim)]),
        "d_out": d_out,
        "num_heads": num_heads,
        "qkv_bias": (rng.random() < 0.5) if qkv_bias is None else qkv_bias,
        "dtype": dtype,
    }


def structure_cases(spec: ModuleSpec, rng: random.Random) -> list[ContractCase]:
    # None: qkv_bias left out of the call, as the book's own code does; its default is False.
    biases = (False, True, None) if spec.has_qkv_bias else (False,)
    cases = []
    for bias, dtype in zip(biases, ("float64", "float32", "float32"), strict=False):
        case = contract_case(spec, rng, qkv_bias=bias, dtype=dtype)
        case["qkv_bias"] = bias  # contract_case draws a random one for None
        cases.append(case)
    return cases


def modes_cases(spec: ModuleSpec, rng: random.Random) -> list[ContractCase]:
    """Cases for the exposing weights (see judges.judge_modes): one-hot tokens, head_dim = num_tokens + 1."""
    def case(p: float) -> ContractCase:
        num_heads = rng.randint(2, 3) if spec.heads.many else 1
        head_dim = DROPOUT_TOKENS + 1
        return {"seed": rng.randrange(2**31), "init_seed": rng.randrange(2**31), "p": p, "batch": DROPOUT_BATCH,
                "num_tokens": DROPOUT_TOKENS, "context_length": DROPOUT_TOKENS + rng.randint(1, 8),
                "d_in": DROPOUT_TOKENS, "num_heads": num_heads, "qkv_bias": False, "dtype": "float32",
                "d_out": spec.heads.d_out(head_dim, num_heads)}

    return [case(0.5), case(rng.choice((0.2, 0.3, 0.4)))]


def device_cases(spec: ModuleSpec, rng: random.Random) -> list[ContractCase]:
    return [{**contract_case(spec, rng, qkv_bias=False), "device": "auto"}]


def state_cases(spec: ModuleSpec, rng: random.Random) -> list[ContractCase]:
    """Calls of several lengths on one module: short, the longest the module takes, short again."""
    case = contract_case(spec, rng, qkv_bias=False, dtype="float64")
    longest = case["context_length"] if "context_length" in spec.arguments else case["num_tokens"] + rng.randint(3, 6)
    case["lengths"] = [rng.randint(2, 4), longest, rng.randint(1, 3)]
    return [case]


def properties_cases(spec: ModuleSpec, rng: random.Random) -> list[ContractCase]:
    # With qkv_bias where the constructor takes it: a bias that forward ignores gets no gradient, and shows.
    case = contract_case(spec, rng, dtype="float64", qkv_bias=spec.has_qkv_bias)
    case.update({"position": rng.randint(0, case["num_tokens"] - 2), "loss_seed": rng.randrange(2**31)})
    return [case]
