"""The commented TOML text of a schema draft (the ``[attributes.NAME]`` format of
:meth:`crowdsafe.data.Schema.from_toml`).

Written by hand (no TOML writer dependency): keys are bare when they can be, else quoted basic
strings; strings are TOML basic strings (JSON escapes, which TOML shares, plus DEL); long lists
are wrapped one item a line. Short hierarchy specifications are inline tables; those holding
value lists (an order, groups) are sub-tables, so each value has its own line. Every comment
line that reports a choice read from the data says FROM THE DATA, and every such choice a release
can use (a hierarchy's, a type read from the values) is also listed, machine-readable, in the
attribute's ``from_data`` key
(:attr:`crowdsafe.data.schema.Attribute.from_data`): a release or view using it is certified not
fit for release until the custodian deletes that key.
"""

from __future__ import annotations

import json
import math
import re
import textwrap
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from crowdsafe.data.schema import Role

if TYPE_CHECKING:
    from crowdsafe.data.schema_draft import AttributeDraft, SchemaDraft

__all__ = ["draft_toml", "toml_key", "toml_value"]

_BARE = re.compile(r"^[A-Za-z0-9_-]+$")
_WIDTH = 96

HEADER = """\
# Schema draft written by `crowdsafe schema draft` from {source}.
# REVIEW IT BEFORE USE: it was guessed by reading the data, and it is your schema once you use it.
#
# The privacy guarantee of a release assumes this schema is PUBLIC: it covers what the release
# adds to what the schema says. Every choice below marked FROM THE DATA was read from the table
# (types, bounds, value lists, orders, code lengths, identifier findings from values). Review
# each one and replace it with a public value (a legal range, a published classification, the
# full domain of a code), or accept what it reveals, before this file is shared or used for a
# release.
# The hierarchy choices, and the types read from the values (integer or real, date, categorical),
# are also listed in a `from_data = [...]` line: a release, view or query answer that uses such a
# column is certified NOT fit for release until you delete that line (the one way to mark it
# reviewed; keep or correct the type first: declare what the column may hold, not what it holds).
#
# Roles: "identifier" columns are dropped before any release; "quasi-identifier" columns are
# generalized with their hierarchy; set role = "sensitive" or "insensitive" where you judge so.
# Load with: crowdsafe publish DATA --schema THIS_FILE ... (see docs/schema-draft.md)
"""


REVIEW_NOTE = ("from_data: what was read from the data; a release, view or query answer using this column is "
               "certified NOT fit for release until you have checked it is public (or replaced it) and deleted "
               "this line")


def toml_key(key: str) -> str:
    """``key`` bare when TOML allows it, else a quoted basic string."""
    return key if _BARE.match(key) else _string(key)


def _string(text: str) -> str:
    return json.dumps(text, ensure_ascii=False).replace("\x7f", "\\u007f")


def toml_value(value: Any, indent: str = "") -> str:
    """``value`` (bool, number, string, list, mapping) as TOML; long lists one item a line."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"a schema file cannot hold {value}")
        return repr(value)
    if isinstance(value, str):
        return _string(value)
    if isinstance(value, Mapping):
        return "{ " + ", ".join(f"{toml_key(str(k))} = {toml_value(v)}" for k, v in value.items()) + " }"
    if isinstance(value, Sequence):
        items = [toml_value(v) for v in value]
        one_line = "[" + ", ".join(items) + "]"
        if len(one_line) + len(indent) <= _WIDTH:
            return one_line
        inner = indent + "    "
        return "[\n" + "".join(f"{inner}{item},\n" for item in items) + indent + "]"
    raise TypeError(f"cannot write {type(value).__name__} to a schema file")


def _comment(lines: Sequence[str], prefix: str = "# ") -> list[str]:
    """Comment lines, each wrapped to the file's width (continuations indented)."""
    out: list[str] = []
    for line in lines:
        out += textwrap.wrap(line, _WIDTH, initial_indent=prefix, subsequent_indent=prefix + "  ",
                             break_long_words=False, break_on_hyphens=False) or [prefix.rstrip()]
    return out


def _attribute(a: AttributeDraft) -> list[str]:
    table = f"attributes.{toml_key(a.name)}"
    out = [f"[{table}]"]
    if a.role is Role.IDENTIFIER:
        where = {"values": "FROM THE DATA (its values)", "type": "from its type",
                 "header": "from the header (no name)"}.get(a.identifier_from or "", "from its name")
        out += _comment([f"direct identifier, {where}: {a.identifier}",
                         "dropped before any release; set role = \"quasi-identifier\" to keep it"])
    if a.sensitive and a.role is not Role.IDENTIFIER:
        out += _comment([f"likely sensitive (its name has the word '{a.sensitive}'): left a quasi-identifier "
                         "(generalized like the others);",
                         "set role = \"sensitive\" if it is what the release is for rather than "
                         "something an attacker could know"])
    out += _comment(list(a.notes))
    out.append(f"role = {toml_value(a.role.value)}")
    out.append(f"type = {toml_value((a.numbers or a.type).value)}")
    if a.order is not None:
        out.append(f"order = {toml_value(list(a.order))}")
    suggestion = a.hierarchy
    if suggestion is None:
        return out + _marked(a.from_data)
    out += _comment(["hierarchy: " + suggestion.notes[0], *suggestion.notes[1:]])
    out += _marked(a.from_data)
    spec = suggestion.spec
    if not spec:  # the table's own hierarchy (a bundled table's): the schema names none
        return out
    if "groups" in spec:
        for level in spec["groups"]:
            out.append(f"[[{table}.hierarchy.groups]]")
            out += [f"{toml_key(str(label))} = {toml_value(members)}" for label, members in level.items()]
    elif "order" in spec:
        out.append(f"[{table}.hierarchy]")
        out += [f"{toml_key(str(k))} = {toml_value(v)}" for k, v in spec.items()]
    else:
        out.append(f"hierarchy = {toml_value(spec)}")
    return out


def _marked(from_data: Sequence[str]) -> list[str]:
    """The ``from_data`` line of an attribute's markers (its type's, its hierarchy's), with why."""
    return [*_comment([REVIEW_NOTE]), f"from_data = {toml_value(list(from_data))}"] if from_data else []


def draft_toml(draft: SchemaDraft) -> str:
    """The commented TOML text of ``draft``."""
    lines = HEADER.format(source=draft.source).splitlines()
    if draft.renames:
        lines += ["#", "# Columns renamed when the file is read (the same rename every time, so this schema matches):"]
        lines += _comment([r.describe() for r in draft.renames], "#   ")
    if draft.notes:
        lines.append("#")
        lines += _comment(list(draft.notes))
    if draft.decimal_comma is not None:
        lines += ["", "# how the data file writes its numbers: true, 1.234,5 is 1234.5; false, a decimal point only",
                  "[csv]", f"decimal_comma = {toml_value(draft.decimal_comma)}"]
    for attribute in draft.attributes:
        lines.append("")
        lines += _attribute(attribute)
    return "\n".join(lines) + "\n"
