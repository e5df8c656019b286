"""How a command ends when it has already said why it stopped."""

from __future__ import annotations


class AlreadySaid(Exception):  # noqa: N818 - not an error: an ending
    """Raised by a command that has printed the one line saying how it ended (the app, stopped
    by Ctrl+C or a signal, says what its releases and any stopped publish left): the command
    line returns ``exit_code`` and prints nothing more. (An exit status of 130 alone would read
    as a run the CLI library stopped, whose own line says that no output was written.)"""

    def __init__(self, exit_code: int) -> None:
        super().__init__(exit_code)
        self.exit_code = exit_code
