"""Which language a student reads, and how bilingual text becomes what they read: the one i18n mechanism.

Every text a student or an instructor reads is a mapping {"en": ..., "zh": ...}: alone (`pick`: an exercise's
title, a misconception's name and hint) or in a table of such mappings by key (`render`: the check messages,
the feedback page, the Gradescope summary), filled with fields.

ATTNKIT_LANG=zh (or zh_CN, zh-Hans...) switches to Simplified Chinese, ATTNKIT_LANG=en to
English; without it the system locale decides (LC_ALL, LC_MESSAGES, LANG), defaulting to English.
"""

import os
from collections.abc import Mapping

__all__ = ["LANGUAGES", "Messages", "language", "pick", "render"]

LANGUAGES = ("en", "zh")
Text = Mapping[str, str]  # {"en": ..., "zh": ...}
Messages = Mapping[str, Text]  # a message catalogue: {key: text}


def language(environ: Mapping[str, str] | None = None) -> str:
    environ = os.environ if environ is None else environ
    chosen = environ.get("ATTNKIT_LANG", "").strip().lower()
    if chosen:
        return "zh" if chosen.startswith("zh") else "en"
    for variable in ("LC_ALL", "LC_MESSAGES", "LANG"):
        value = environ.get(variable, "")
        if value:
            return "zh" if value.lower().startswith("zh") else "en"
    return "en"


def pick(text: Text, lang: str) -> str:
    """`text` in `lang`, English when it has no such translation."""
    return text.get(lang) or text["en"]


def render(messages: Messages, key: str, lang: str, fields: Mapping[str, object] | None = None) -> str:
    """The message `key` in `lang`, filled with `fields`; a missing field shows as {name}, never crashes."""
    try:
        template = messages[key][lang]
    except KeyError:
        return key
    return template.format_map(_KeepMissing(fields or {}))


class _KeepMissing(dict[str, object]):
    def __missing__(self, name: str) -> str:
        return "{" + name + "}"
