"""How the command line names the library's parameters in an error message.

Library errors speak of parameters as a Python caller writes them and list those they name
(:attr:`crowdsafe.errors.CrowdsafeError.parameters`); the command line prints the flags its user
typed instead. For each parameter the error lists, with its flag (``--`` and the name with
``-`` for ``_``, unless :data:`FLAGS` says otherwise):

- ``the NAME parameter`` becomes the flag (``the columns parameter`` -> ``--columns``);
- ``NAME=True`` becomes the flag alone (``exploratory=True`` -> ``--exploratory``);
- ``NAME='value'`` becomes the flag and the value (``objective='classification'`` ->
  ``--objective classification``);
- ``NAME=[...]`` becomes the flag and a list (``qi=[...]`` -> ``--qi a,b,c``);
- ``NAME=PLACEHOLDER`` (capitals) keeps the placeholder (``max_rows=N`` -> ``--max-rows N``);
- ``NAME=NUMBER`` keeps the number as written (``max_rows=5,999`` -> ``--max-rows 5,999``);
- the other forms in :data:`EXAMPLES` are replaced as listed (``ledger=None`` -> ``--no-ledger``; ``budget=(ε, δ)`` ->
  ``--budget E,D``; ``set_budget(DATA, epsilon=E, delta=D)`` -> the ``crowdsafe ledger init``
  command line, ``change_budget(NAME, epsilon=E, delta=D)`` -> ``crowdsafe ledger budget``; ``domains={attribute: [values]}`` -> ``--domains FILE`` and its JSON form, ``domains['sex']`` ->
  ``'sex' in --domains FILE``).

A message that lists no parameter is printed as it is: older messages that already name a
flag stay right.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from crowdsafe.errors import CrowdsafeError
from crowdsafe.identity import printable

# Parameters whose flag is not "--" + the name with "-" for "_".
FLAGS: dict[str, str] = {"allow_raise": "--raise"}

# Python forms whose command-line form the rules above do not derive: (pattern, replacement).
EXAMPLES: dict[str, tuple[tuple[str, str], ...]] = {
    "budget": (
        (r"budget=\(ε, δ\)", "--budget E,D"),
        (r"set_budget\('?([^'()]*?)'?, epsilon=E, delta=D\)", r"`crowdsafe ledger init \1 --epsilon E --delta D`"),
        (r"change_budget\('?([^'()]*?)'?, epsilon=E, delta=D\)",
         r"`crowdsafe ledger budget \1 --epsilon E --delta D`"),
    ),
    "ledger": ((r"(?<![\w-])ledger=None", "--no-ledger"),),
    "domains": (
        (r"domains=\{attribute: \[values\]\}", '--domains FILE (JSON: {"attribute": [values]})'),
        (r"(?<![\w-])domains\[('[^']*')\]", r"\1 in --domains FILE"),
    ),
}


def flag(parameter: str) -> str:
    """The command-line flag that sets ``parameter``."""
    return FLAGS.get(parameter, "--" + parameter.replace("_", "-"))


def _flag_and_value(option: str) -> Callable[[re.Match[str]], str]:
    """The replacement of ``NAME='value'``: the flag, then the value as written."""
    return lambda match: f"{option} {match.group(1)}"


def cli_message(error: CrowdsafeError) -> str:
    """The error's message on one line, with the parameters it lists named by their flags."""
    # one line (line breaks as spaces), then no control character raw (an ESC in a name or path)
    message = printable(" ".join(str(error).split())) or type(error).__name__
    for parameter in getattr(error, "parameters", ()):
        option = flag(parameter)
        name = re.escape(parameter)
        for pattern, typed in EXAMPLES.get(parameter, ()):
            message = re.sub(pattern, typed, message)
        message = message.replace(f"the {parameter} parameter", option)
        message = re.sub(rf"(?<![\w-]){name}=True\b", option, message)
        message = re.sub(rf"(?<![\w-]){name}='([^']*)'", _flag_and_value(option), message)
        message = re.sub(rf"(?<![\w-]){name}=\[\.\.\.\]", f"{option} a,b,c", message)
        message = re.sub(rf"(?<![\w-]){name}=([A-Z][A-Z_.]*)(?![\w(])", rf"{option} \1", message)
        message = re.sub(rf"(?<![\w-]){name}=(\d[\d,._]*\d|\d)(?![\w(])", rf"{option} \1", message)
    return message
