"""The torch releases the student kit's stored vectors are verified against, and the refusal of any other.

The kit's expectations were computed once, at build time; a student's code runs on the learner's own torch. The
verdicts agree with the full kit's on every minor release in SUPPORTED (devtools/kit_torch_matrix.py installs the kit
beside each and compares; tests/test_student_kit_torch_range.py does it again for the oldest and the newest). Outside
it, a changed kernel could move a result past a tolerance: the kit refuses to import rather than give a verdict it
cannot stand behind.
"""

import re
from dataclasses import dataclass

__all__ = ["REQUIRES_PYTHON", "SUPPORTED", "TorchRange", "require_supported_torch", "unsupported_message"]


@dataclass(frozen=True)
class TorchRange:
    lowest: tuple[int, int]  # (major, minor), included
    below: tuple[int, int]  # (major, minor), excluded

    def requirement(self) -> str:
        """The range as a pip requirement, e.g. `torch>=2.13,<2.15`."""
        return f"torch>={self.lowest[0]}.{self.lowest[1]},<{self.below[0]}.{self.below[1]}"

    def admits(self, version: str) -> bool:
        release = _major_minor(version)
        return release is not None and self.lowest <= release < self.below


# Every minor release from 2.5 to 2.15 agreed with the full kit (devtools/kit_torch_matrix.py, docs/student-kit.md).
# Not 2.4 and older: their F.scaled_dot_product_attention returns NaN for a query whose whole row is masked, where 2.5
# and later return zeros, so a student's attention that calls it reads differently there (docs/student-kit.md).
SUPPORTED = TorchRange(lowest=(2, 5), below=(2, 16))
# The Pythons the kit declares: Colab and Kaggle run 3.11 or 3.12 today.
REQUIRES_PYTHON = ">=3.11"


class UnsupportedTorch(ImportError):
    """The environment's torch is outside SUPPORTED."""


def _major_minor(version: str) -> tuple[int, int] | None:
    """(major, minor) of a torch version string such as `2.14.1+cu128` or `2.15.0.dev20260101`."""
    found = re.match(r"(\d+)\.(\d+)", version)
    return (int(found.group(1)), int(found.group(2))) if found else None


def unsupported_message(installed: str, supported: TorchRange = SUPPORTED) -> str:
    """What a learner reads when their torch is outside the range: both versions and the command that fixes it."""
    wanted = supported.requirement()
    return (f"The attnkit student kit was verified with {wanted}, but this environment has torch {installed}. "
            f"Its stored answers could give wrong verdicts with this torch, so it does not load. "
            f"Install a torch in the range (`pip install \"{wanted}\"`, then restart the kernel), or ask your "
            f"instructor for a kit built for torch {installed}.\n"
            f"attnkit 学生版工具包已用 {wanted} 验证过，但当前环境的 torch 是 {installed}。"
            f"用这个版本的 torch，预存的答案可能给出错误的判定，所以工具包不加载。"
            f"请安装范围内的 torch（`pip install \"{wanted}\"`，然后重启内核），"
            f"或请老师提供为 torch {installed} 构建的工具包。")


def require_supported_torch(installed: str, supported: TorchRange = SUPPORTED) -> None:
    """Raise UnsupportedTorch (an ImportError: `from autograder import check` fails with it) outside `supported`
    (the kit's init passes the range it was built with)."""
    if not supported.admits(installed):
        raise UnsupportedTorch(unsupported_message(installed, supported))
