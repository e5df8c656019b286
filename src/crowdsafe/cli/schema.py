"""``crowdsafe schema draft DATA --out schema.toml``: a commented schema to review.

The draft reads the data (custodian-only): the summary printed says so, and the file marks every
choice taken from the data, for the custodian to replace with public values before the schema
is shared or used for a release (the guarantee assumes the schema is public); those a release
can use are listed in ``from_data`` keys, which keep its certificate unfit until deleted. See
:mod:`crowdsafe.data.schema_draft` and docs/schema-draft.md.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from crowdsafe.cli.options import DataArg, DecimalCommaOpt, ForceOpt, JsonOpt, emit
from crowdsafe.files import check_output_path


def register(app: typer.Typer) -> None:
    group = typer.Typer(help="Schema files: draft one from a table, to review.", no_args_is_help=True)
    app.add_typer(group, name="schema")

    @group.command("draft")
    def draft_command(
        data: DataArg,
        out: Annotated[Path, typer.Option("--out", "-o", help="The schema file to write (.toml).")],
        force: ForceOpt = False,
        separator: Annotated[str | None, typer.Option("--separator", help="CSV field separator (default: sniffed).")] = None,
        decimal_comma: DecimalCommaOpt = None,
        as_json: JsonOpt = False,
    ) -> None:
        """Draft a schema for DATA: direct identifiers, types, likely sensitive attributes and a
        hierarchy for every quasi-identifier, as a commented TOML file to review.

        Custodian-only: the draft reads the data; lines marked FROM THE DATA must be reviewed or
        replaced with public values before the schema is shared or used (the guarantee assumes
        the schema is public). A release using a column whose from_data line is still there is
        certified NOT fit for release: delete the line once you have checked it.

        Example: crowdsafe schema draft people.csv --out people.toml
        """
        from crowdsafe.data.schema_draft import draft_schema
        from crowdsafe.drivers.run_files import guard
        from crowdsafe.output_guard import Output, OutputKind

        check_output_path(out, (".toml",))
        # a draft is the custodian's to edit: an existing one is replaced only with --force
        guard([Output(out, "the schema draft", OutputKind.PLAIN)], data=data, force=force)
        draft = draft_schema(data, separator=separator, decimal_comma=decimal_comma)
        draft.write(out, force=True)
        payload = {
            "path": str(out),
            "custodian_only": True,
            "identifiers": {a.name: {"reason": a.identifier, "from": a.identifier_from}
                            for a in draft.attributes if a.identifier},
            "quasi_identifiers": {a.name: {"hierarchy": a.hierarchy.kind, "from_data": list(a.from_data)}
                                  for a in draft.attributes if a.hierarchy is not None},
            "from_data": {name: list(read) for name, read in draft.from_data.items()},  # types' and hierarchies'
            "sensitive_suggestions": draft.sensitive_suggestions,
            "renames": [{"position": r.position, "from": r.original, "to": r.new} for r in draft.renames],
        }
        emit(payload, as_json, lambda: typer.echo(f"{draft.summary()}\nwrote {out}: review it (delete each "
                                                  f"from_data line once checked), then use it with --schema {out}"))
