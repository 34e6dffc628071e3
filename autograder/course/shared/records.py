"""Types every folder's probes and judges share: the notebook namespace, a module's state, an exception record."""

from collections.abc import Mapping
from typing import Any

from torch import Tensor

__all__ = ["ExceptionRecord", "Namespace", "State"]

Namespace = Mapping[str, Any]  # the notebook's objects a check receives, by name


State = dict[str, Tensor]  # parameters and buffers by qualified name (probing.state_of)


ExceptionRecord = dict[str, Any]  # probing.describe_exception: type, message, line, ...
