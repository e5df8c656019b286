"""``crowdsafe app [DATA]``: the local web app (issue 35), one step a page from opening a table
to downloading its release. The app's modules (Starlette, uvicorn, Jinja2) are imported only when
this command runs (tests/cli/test_lazy_imports.py)."""

from __future__ import annotations

import re
import signal
from pathlib import Path
from typing import Annotated

import typer

from crowdsafe.cli.ending import AlreadySaid
from crowdsafe.cli.options import SeedOpt, whole_option
from crowdsafe.errors import ParameterError

_SIZE = re.compile(r"^\s*([0-9]+(?:\.[0-9]+)?)\s*([KMGT]?)(?:i?B)?\s*$", re.IGNORECASE)


def parse_size(text: str) -> int:
    """``500M``, ``2G``, ``1.5GiB``, ``1048576``: a size in bytes (powers of 1024)."""
    match = _SIZE.match(text)
    if match is None:
        raise ParameterError(f"--max-upload: {text!r} is not a size (e.g. 500M, 2G)", parameter="max_upload")
    shift = {"": 0, "K": 10, "M": 20, "G": 30, "T": 40}[match.group(2).upper()]
    size = int(float(match.group(1)) * (1 << shift))
    if size < 1:
        raise ParameterError("--max-upload must be at least 1 byte", parameter="max_upload")
    return size


def register(app: typer.Typer) -> None:
    @app.command("app")
    def app_command(
        data: Annotated[str | None, typer.Argument(help="A CSV or Parquet file, or a bundled dataset's name: start at the schema review with it (default: choose in the app).")] = None,
        port: Annotated[int, whole_option("--port", help="The port on 127.0.0.1 (0: any free port).")] = 8765,
        no_browser: Annotated[bool, typer.Option("--no-browser", help="Do not open a browser; open the URL printed on the first line yourself.")] = False,
        max_upload: Annotated[str, typer.Option("--max-upload", help="The largest file the app accepts as an upload, e.g. 500M or 2G (larger files: give their path, read in place).")] = "4G",
        ledger: Annotated[Path | None, typer.Option("--ledger", help="The budget ledger file (default: $CROWDSAFE_LEDGER, else $XDG_DATA_HOME/crowdsafe/ledger.sqlite3, ~/.local/share/crowdsafe/ledger.sqlite3 without it).")] = None,
        out_dir: Annotated[Path, typer.Option("--out-dir", help="Where releases are written, one folder each (kept: the ledger names them).")] = Path("releases"),
        seed: SeedOpt = None,
    ) -> None:
        """Open the local web app: open a table, review its schema, plan, publish, read the report,
        attack the release and download it, one step a page.

        Serves on 127.0.0.1 only, until Ctrl+C, and opens the browser on a one-time URL (also the first
        line printed). To use it from another machine, forward the port over ssh (docs/app.md).

        Example: crowdsafe app people.csv

        Example (headless): crowdsafe app --port 8765 --no-browser
        """
        from crowdsafe.app.server import serve

        if not 0 <= port <= 65535:
            raise ParameterError(f"--port must lie in 0..65535, got {port}", parameter="port")
        try:
            serve(data, port=port, open_browser=not no_browser, max_upload=parse_size(max_upload), ledger=ledger,
                  out_dir=out_dir, seed=seed)
        except KeyboardInterrupt as exc:  # Ctrl+C, or SIGTERM / SIGHUP (crowdsafe.cli.Stopped): how it ends
            signum = getattr(exc, "signum", signal.SIGINT)
            how = "interrupted" if signum == signal.SIGINT else f"stopped by {signal.Signals(signum).name}"
            typer.echo(f"crowdsafe: {how}; the app stopped (the releases it published stay in "
                       f"{out_dir.expanduser().resolve()}; a publish it stopped, if any, wrote nothing; "
                       "the lines above say whether it had been charged)", err=True)
            raise AlreadySaid(128 + signum) from None
