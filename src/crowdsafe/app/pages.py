"""The app's pages: one step a URL, and the Starlette application that serves them.

=====================================  =============================================================
``GET /``                              to the step the session is at
``GET /open``, ``POST /open/...``      1. open a table: ``bundled``, ``path`` (read in place), ``upload``
``GET|POST /schema``                   2. review the schema draft; ``GET /schema.toml`` downloads it
``GET /plan``                          3. ε and δ; ``/plan/preview`` (k, β, ε1 live) and ``/plan/ledger``
``POST /publish``                      4. publish in a worker thread, then ``GET /release/N`` (its
                                       progress: ``/release/N/status``) shows the result
``GET /release/N/report``              5. the report (the file itself: ``/release/N/report.html``)
``GET|POST /release/N/attack``         6. the intersection attack with the dataset's earlier releases
``GET /release/N/download``            7. the release, its certificate and its report
                                       (``/release/N/file/{release,certificate,report}``)
=====================================  =============================================================

What a page shows is (a) parameters and the plan, (b) DP outputs (the release, its certificate,
the report built from them; marked ``data-boundary="dp-output"``) or (c) custodian-only facts in
their own panel, labelled so (``data-boundary="custodian"``). The schema draft is read from the
data: all of it sits in a custodian panel. The guard (:mod:`crowdsafe.app.security`) wraps it all.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from decimal import Decimal
from pathlib import Path
from typing import Any

import jinja2
import markupsafe
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import FileResponse, HTMLResponse, RedirectResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from crowdsafe.app.forms import AlreadyStarted
from crowdsafe.app.refusals import in_app_words
from crowdsafe.app.security import REPORT_POLICY, Checks, Guard, Secrets
from crowdsafe.app.workspace import BUNDLED, ROLES, ReleaseRecord, Workspace
from crowdsafe.errors import CrowdsafeError, ParameterError
from crowdsafe.number_text import odds_factor, parse_number, parse_whole, write_number

#: how long a progress request waits for its job to end before it answers with the progress (s):
#: the page asks again at once (progress.html), so it shows the release as soon as it is ready
#: instead of at the next tick of a timer, and the progress as often as before (every 0.7 s)
PROGRESS_WAIT = 0.7
STEPS = ("Open", "Schema", "Plan", "Publish", "Report", "Attack", "Download")
DEFAULTS = {"epsilon": "1", "delta": "1e-6", "k": "", "beta": "", "epsilon1": "", "budget_epsilon": "",
            "budget_delta": ""}


def _environment() -> jinja2.Environment:
    env = jinja2.Environment(loader=jinja2.PackageLoader("crowdsafe.app", "templates"),
                             autoescape=jinja2.select_autoescape(default=True), undefined=jinja2.StrictUndefined,
                             trim_blocks=True, lstrip_blocks=True)
    env.filters["num"] = _number
    env.filters["loss"] = lambda x, digits=4: _number(x, digits, "up")
    env.filters["left"] = lambda x, digits=4: _number(x, digits, "down")
    # the sampling rate β as the report and the command line show it: down, the side a user may type back
    env.filters["rate"] = lambda x, digits=4: _number(x, digits, "down")
    env.filters["pct"] = lambda x: "–" if x is None else f"{100 * x:.1f}%"
    env.filters["pct_up"] = _percent_up  # a bound on a probability: never shown below it
    env.filters["count"] = lambda x: "–" if x is None else f"{int(x):,}"
    env.filters["size"] = _size
    env.filters["odds"] = odds_factor  # e^ε, never shown as 1 for ε > 0
    env.filters["named"] = str  # (Pages names an upload's private copy by its name: Pages.as_named)
    env.filters["in_app"] = _in_app
    return env


class Pages:
    """The handlers, over one :class:`Workspace`."""

    def __init__(self, workspace: Workspace, keys: Secrets) -> None:
        self.ws = workspace
        self.keys = keys
        self.env = _environment()
        self.env.filters["named"] = self.as_named

    def as_named(self, message: object) -> str:
        """``message`` with each upload's private copy named by the file's name as uploaded (its
        label) and the private folder as such: what a page may say of the user's files; a Python
        form the library names, in the app's words (:func:`crowdsafe.app.refusals.in_app_words`)."""
        text = in_app_words(str(message))
        for folder in dict.fromkeys((str(self.ws.workdir.resolve()), str(self.ws.workdir))):
            text = re.sub(re.escape(folder) + r"/uploads/\d+/", "", text)
            text = text.replace(folder, "the app's private folder")
        return text

    # -- rendering ---------------------------------------------------------------------------------
    def render(self, request: Request, template: str, step: int, status: int = 200,
               headers: Mapping[str, str] | None = None, **context: Any) -> HTMLResponse:
        record = context.get("record")
        number = record.number if record is not None else (max(self.ws.releases) if self.ws.releases else None)
        ready = number is not None and self.ws.releases[number].status == "done"
        links: list[str | None] = ["/open", "/schema", "/plan", f"/release/{number}" if number is not None else None]
        links += [f"/release/{number}/{page}" if ready else None for page in ("report", "attack", "download")]
        opened = self.ws.opened
        context.setdefault("error", None)
        if opened is None:
            links[1] = links[2] = None
        # a release's pages name the table it was published from, whatever table is open now
        table_label = record.label if record is not None else (opened.label if opened is not None else None)
        html = self.env.get_template(template).render(
            request=request, step=step, steps=list(zip(STEPS, links)), csrf=self.keys.csrf, table_label=table_label,
            seeded=self.ws.seed is not None, roles=ROLES, bundled=BUNDLED, max_upload=self.ws.max_upload,
            **context)
        return HTMLResponse(html, status_code=status, headers=headers)

    def fragment(self, template: str, **context: Any) -> HTMLResponse:
        return HTMLResponse(self.env.get_template(template).render(csrf=self.keys.csrf, **context))

    # -- 1. open -----------------------------------------------------------------------------------
    async def home(self, request: Request) -> Response:
        return RedirectResponse("/schema" if self.ws.opened is not None else "/open", status_code=303)

    async def open_page(self, request: Request) -> Response:
        return self.render(request, "open.html", 0)

    async def open_bundled(self, request: Request) -> Response:
        form = await request.form()
        return await self._open(request, self.ws.open_bundled, str(form.get("name", "")))

    async def open_path(self, request: Request) -> Response:
        form = await request.form()
        return await self._open(request, self.ws.open_local, str(form.get("path", "")))

    async def open_upload(self, request: Request) -> Response:
        from crowdsafe.app.upload import TooLarge, receive_upload

        folder = await run_in_threadpool(self.ws.upload_folder)
        try:
            path, name, _ = await receive_upload(request, folder, self.ws.max_upload)
        except TooLarge:
            return self.render(request, "open.html", 0, status=413,
                               error=f"The file is larger than the upload limit ({_size(self.ws.max_upload)}). Give "
                                     "its path instead (it is then read in place), or start the app with a larger "
                                     "--max-upload.")
        except CrowdsafeError as exc:
            return self.render(request, "open.html", 0, status=400, error=str(exc))
        return await self._open(request, self.ws.open_upload, path, name)

    async def _open(self, request: Request, opener: Callable[..., Any], *args: Any) -> Response:
        try:
            await run_in_threadpool(opener, *args)
        except CrowdsafeError as exc:
            return self.render(request, "open.html", 0, status=400, error=str(exc))
        return RedirectResponse("/schema", status_code=303)

    # -- 2. schema ---------------------------------------------------------------------------------
    async def schema_page(self, request: Request) -> Response:
        if self.ws.opened is None:
            return RedirectResponse("/open", status_code=303)
        from crowdsafe.app.schema_view import review_columns

        _, review = self.ws.require()
        error = None
        try:
            dataset = await run_in_threadpool(self.ws.domain)
        except CrowdsafeError as exc:
            dataset, error = None, str(exc)
        columns = await run_in_threadpool(review_columns, review, dataset)
        draft = review.effective()
        return self.render(request, "schema.html", 1, columns=columns, draft=draft, error=error,
                           renames=[r.describe() for r in draft.renames], notes=list(draft.notes),
                           saved=request.query_params.get("saved") is not None,
                           unconfirmed=sum(1 for c in columns for m in (*c.role_markers, *c.type_markers, *c.markers)
                                           if not m["confirmed"]))

    async def schema_save(self, request: Request) -> Response:
        if self.ws.opened is None:
            return RedirectResponse("/open", status_code=303)
        _, review = self.ws.require()
        form = await request.form()
        roles, confirmed = {}, set()
        for i, a in enumerate(review.draft.attributes):
            role = form.get(f"role-{i}")
            if role is not None:
                roles[a.name] = str(role)
            # the role's markers, the type's, then the hierarchy's (as the page numbers them: schema_view)
            confirmed |= {(a.name, m) for j, m in enumerate(a.from_data) if form.get(f"confirm-{i}-{j}")}
        try:
            await run_in_threadpool(self.ws.update_review, roles, confirmed)
        except CrowdsafeError as exc:
            return self.render(request, "error.html", 1, status=400, error=str(exc))
        target = "/schema?saved=1" if form.get("action") == "save" else "/plan"
        return RedirectResponse(target, status_code=303)

    async def schema_file(self, request: Request) -> Response:
        if self.ws.opened is None:
            return RedirectResponse("/open", status_code=303)
        return FileResponse(self.ws.schema_path, media_type="application/toml; charset=utf-8",
                            filename=f"{Path(self.ws.opened.label).stem or 'data'}.schema.toml")

    # -- 3. plan -----------------------------------------------------------------------------------
    async def plan_page(self, request: Request) -> Response:
        if self.ws.opened is None:
            return RedirectResponse("/open", status_code=303)
        values = {**DEFAULTS, **self.ws.plan_values, **{k: v for k, v in request.query_params.items() if k in DEFAULTS}}
        preview = await self._preview(values)
        return self.render(request, "plan.html", 2, values=values, error=request.query_params.get("error"),
                           form_token=self.ws.issue_form(), **preview)

    async def plan_preview(self, request: Request) -> Response:
        if self.ws.opened is None:
            return HTMLResponse("", status_code=409)
        values = {**DEFAULTS, **{k: v for k, v in request.query_params.items() if k in DEFAULTS}}
        return self.fragment("plan_preview.html", **await self._preview(values))

    async def _preview(self, values: dict[str, str]) -> dict[str, Any]:
        try:
            unfit = await run_in_threadpool(self.ws.unconfirmed)  # the schema's unconfirmed choices (public)
        except CrowdsafeError:
            unfit = []  # (the plan below says why the table cannot be read)
        try:
            request = plan_request(values)
            plan = await run_in_threadpool(self.ws.plan, request)
        except CrowdsafeError as exc:
            return {"plan": None, "plan_error": str(exc), "unfit": unfit, "facts": []}
        facts = await run_in_threadpool(self.ws.plan_facts, plan)  # custodian-only: its own panel
        return {"plan": plan.as_dict(), "plan_error": None, "unfit": unfit,
                "facts": facts}

    async def plan_ledger(self, request: Request) -> Response:
        if self.ws.opened is None:
            return HTMLResponse("", status_code=409)
        try:
            view = await run_in_threadpool(self.ws.ledger_view)
        except CrowdsafeError as exc:
            return self.fragment("ledger.html", ledger=None, ledger_error=str(exc))
        return self.fragment("ledger.html", ledger=view, ledger_error=None)

    # -- 4. publish --------------------------------------------------------------------------------
    async def publish(self, request: Request) -> Response:
        if self.ws.opened is None:
            return RedirectResponse("/open", status_code=303)
        form = await request.form()
        values = {**DEFAULTS, **{k: str(v) for k, v in form.items() if k in DEFAULTS}}
        try:
            publish_request = plan_request(values)
            if not str(form.get("form", "")):
                raise ParameterError("this publish form has no form token: open the plan page again and publish "
                                     "from there")
            record = await run_in_threadpool(self.ws.start_publish, publish_request, str(form["form"]))
        except AlreadyStarted as repeat:  # a double click or a form sent again: nothing more starts
            return self.render(request, "error.html", 3, status=409, heading="This release was already started",
                               message=f"This plan form already started release {repeat.number}: sending it again "
                                       "starts nothing and charges nothing.",
                               back=(f"/release/{repeat.number}", f"See release {repeat.number}"))
        except CrowdsafeError as exc:
            preview = await self._preview(values)
            # said once: at the top, the plan's card pointing to it (the same refusal)
            preview["plan_error_above"] = preview["plan_error"] == str(exc)
            return self.render(request, "plan.html", 2, status=400, values=values, error=str(exc),
                               form_token=self.ws.issue_form(), **preview)
        # the form's defaults from now on: values the publish accepted (a refused one is not kept)
        self.ws.plan_values = {k: v for k, v in values.items() if not k.startswith("budget")}
        return RedirectResponse(f"/release/{record.number}", status_code=303)

    def _record(self, request: Request) -> ReleaseRecord | None:
        try:
            return self.ws.release(int(request.path_params["number"]))
        except (LookupError, ValueError):
            return None

    async def release_page(self, request: Request) -> Response:
        record = self._record(request)
        if record is None:
            return self._missing(request, 3)
        return self.render(request, "release.html", 3, record=record, passes=record.display.snapshot(),
                           **release_context(record))

    async def release_status(self, request: Request) -> Response:
        record = self._record(request)
        if record is None:
            return HTMLResponse("", status_code=404)
        if not record.ended.is_set():
            await run_in_threadpool(record.ended.wait, PROGRESS_WAIT)
        if record.status != "running":
            return HTMLResponse("", headers={"HX-Redirect": f"/release/{record.number}"})
        return self.fragment("progress.html", record=record, passes=record.display.snapshot())

    # -- 5. report ---------------------------------------------------------------------------------
    async def report_page(self, request: Request) -> Response:
        record = self._record(request)
        if record is None or record.status != "done":
            return self._not_ready(request, record, 4)
        if not record.report.is_file():  # never the frame around the app's error page
            return self._gone(request, 4, f"the report is no longer at {record.report}")
        return self.render(request, "report.html", 4, record=record)

    async def report_file(self, request: Request) -> Response:
        record = self._record(request)
        if record is None or record.status != "done":
            return self._not_ready(request, record, 4)
        if not record.report.is_file():
            return self._gone(request, 4, f"the report is no longer at {record.report}")
        return FileResponse(record.report, media_type="text/html; charset=utf-8",
                            headers={"Content-Security-Policy": REPORT_POLICY})

    # -- 6. attack ---------------------------------------------------------------------------------
    async def attack_page(self, request: Request) -> Response:
        record = self._record(request)
        if record is None or record.status != "done":
            return self._not_ready(request, record, 5)
        try:
            context = await self._attack_context(record)
        except CrowdsafeError as exc:  # the release or its table moved or deleted since it was published
            return self._gone(request, 5, exc)
        return self.render(request, "attack.html", 5, record=record, **context)

    async def _attack_context(self, record: ReleaseRecord) -> dict[str, Any]:
        from crowdsafe.report.build import read_certificate

        certificate = await run_in_threadpool(read_certificate, record.table)
        columns = [str(c) for c in (certificate.get("parameters") or {}).get("quasi_identifiers") or []]
        try:
            earlier = await run_in_threadpool(self.ws.earlier_releases, record)
            ledger_error = None
        except CrowdsafeError as exc:
            earlier, ledger_error = [], str(exc)
        own = ((record.publication.custodian_report().get("ledger") or {}).get("entry")
               if record.publication is not None else None)
        for e in earlier:  # its place in the ledger beside this release's own entry
            e["order"] = "other" if own is None else ("earlier" if e["entry"] < own else "later")
        dataset = await run_in_threadpool(self.ws.record_domain, record)  # its own table, whatever is open now
        sensitive = [c for c in dataset.sensitive if c in columns]
        chosen = (record.attack or {}).get("sensitive") or (sensitive[0] if sensitive else (columns[-1] if columns
                                                                                              else None))
        return {"columns": columns, "earlier": earlier, "chosen": chosen, "attack": record.attack,
                "ledger_error": ledger_error, "attack_error": None}

    async def attack_run(self, request: Request) -> Response:
        record = self._record(request)
        if record is None or record.status != "done":
            return self._not_ready(request, record, 5)
        form = await request.form()
        sensitive = str(form.get("sensitive", ""))
        earlier = [str(v) for v in form.getlist("earlier")]
        try:
            await run_in_threadpool(self.ws.run_attack, record, sensitive, earlier)
        except CrowdsafeError as exc:
            try:
                context = await self._attack_context(record)
            except CrowdsafeError as gone:
                return self._gone(request, 5, gone)
            context["attack_error"] = str(exc)
            return self.render(request, "attack.html", 5, status=400, record=record, **context)
        return RedirectResponse(f"/release/{record.number}/attack", status_code=303)

    # -- 7. download -------------------------------------------------------------------------------
    async def download_page(self, request: Request) -> Response:
        record = self._record(request)
        if record is None or record.status != "done":
            return self._not_ready(request, record, 6)
        gone = [f"the {kind} file is no longer at {path}" for kind, path in _files(record).items()
                if not path.is_file()]
        if gone:  # the three are published together: none is offered without the others
            return self._gone(request, 6, "; ".join(gone))
        files = [(kind, path.name, path.stat().st_size) for kind, path in _files(record).items()]
        return self.render(request, "download.html", 6, record=record, files=files)

    async def download_file(self, request: Request) -> Response:
        record = self._record(request)
        kind = request.path_params["kind"]
        if record is None or record.status != "done":
            return self._not_ready(request, record, 6)
        if kind not in _files(record):
            return self.render(request, "error.html", 6, status=404, heading="No such file",
                               error=f"A release has three files: release, certificate and report; not {kind!r}.",
                               back=(f"/release/{record.number}/download", "Back to the downloads"))
        path = _files(record)[kind]
        if not path.is_file():
            return self._gone(request, 6, f"the {kind} file is no longer at {path}")
        media = {"release": "text/csv; charset=utf-8", "certificate": "application/json",
                 "report": "text/html; charset=utf-8"}[kind]
        return FileResponse(path, media_type=media, filename=path.name,
                            headers={"Content-Security-Policy": REPORT_POLICY} if kind == "report" else None)

    def _gone(self, request: Request, step: int, problem: object) -> Response:
        """A release whose files (or whose table) were moved or deleted since it was published."""
        return self.render(request, "error.html", step, status=404,
                           error=f"This release's files are not where it was published: {problem}. Put them back, "
                                 "or publish again.")

    def _not_ready(self, request: Request, record: ReleaseRecord | None, step: int) -> Response:
        """A release still running: its page, which follows it; one that failed (it has no report,
        attack or file) or none at all: 404."""
        if record is None:
            return self._missing(request, step)
        if record.status == "failed":
            return self.render(request, "error.html", step, status=404, heading="Not published",
                               error=f"Release {record.number} was not published, so it has no report, attack or "
                                     "file: its page says why.",
                               back=(f"/release/{record.number}", f"See release {record.number}"))
        return RedirectResponse(f"/release/{record.number}", status_code=303)

    def _missing(self, request: Request, step: int) -> Response:
        return self.render(request, "error.html", step, status=404, error="There is no such release in this session.")

    async def publish_address(self, request: Request) -> Response:
        """``GET /publish`` (the address a refused publish leaves, reloaded or bookmarked): the plan."""
        return RedirectResponse("/plan", status_code=303)

    async def http_error(self, request: Request, exc: Exception) -> Response:
        """An address the app does not have (404), a method it does not take (405) or a request it
        cannot read (400): the app's own page, one line and the way back."""
        code = getattr(exc, "status_code", 400)
        if code == 404:
            heading, error = "Not found", f"This app has no page at {request.url.path}."
        elif code == 405:
            heading, error = "Not here", f"{request.url.path} does not take a {request.method} request."
        else:
            heading, error = "Could not read the request", str(getattr(exc, "detail", "")) or "a malformed request"
        return self.render(request, "error.html", -1, status=code, heading=heading, error=error,
                           headers=getattr(exc, "headers", None))

    # -- the application ---------------------------------------------------------------------------
    def routes(self) -> list[Any]:
        return [
            Route("/", self.home),
            Route("/open", self.open_page),
            Route("/open/bundled", self.open_bundled, methods=["POST"]),
            Route("/open/path", self.open_path, methods=["POST"]),
            Route("/open/upload", self.open_upload, methods=["POST"]),
            Route("/schema", self.schema_page),
            Route("/schema", self.schema_save, methods=["POST"]),
            Route("/schema.toml", self.schema_file),
            Route("/plan", self.plan_page),
            Route("/plan/preview", self.plan_preview),
            Route("/plan/ledger", self.plan_ledger),
            Route("/publish", self.publish, methods=["POST"]),
            Route("/publish", self.publish_address, methods=["GET"]),
            Route("/release/{number:int}", self.release_page),
            Route("/release/{number:int}/status", self.release_status),
            Route("/release/{number:int}/report", self.report_page),
            Route("/release/{number:int}/report.html", self.report_file),
            Route("/release/{number:int}/attack", self.attack_page),
            Route("/release/{number:int}/attack", self.attack_run, methods=["POST"]),
            Route("/release/{number:int}/download", self.download_page),
            Route("/release/{number:int}/file/{kind}", self.download_file),
            Route("/favicon.ico", lambda request: RedirectResponse("/static/favicon.svg", status_code=301)),
            Mount("/static", StaticFiles(packages=[("crowdsafe.app", "static")]), name="static"),
        ]


def create_app(workspace: Workspace, *, port: int, keys: Secrets | None = None, checks: Checks | None = None) -> Guard:
    """The guarded application serving ``workspace`` on ``port`` (the guard checks the Host and
    Origin headers against it)."""
    keys = keys or Secrets()
    pages = Pages(workspace, keys)
    from starlette.exceptions import HTTPException

    app = Starlette(routes=pages.routes(), exception_handlers={HTTPException: pages.http_error})
    return Guard(app, port=port, keys=keys, checks=checks)


def plan_request(values: dict[str, str]) -> dict[str, Any]:
    """The publish request from the plan form's text fields, each number read strictly
    (:mod:`crowdsafe.number_text`); blank optional fields are left to the planner."""
    request: dict[str, Any] = {"epsilon": parse_number(values["epsilon"].strip(), "ε"),
                               "delta": parse_number(values["delta"].strip(), "δ")}
    if values.get("k", "").strip():
        request["k"] = parse_whole(values["k"].strip(), "k")
    for name, label in (("beta", "β"), ("epsilon1", "ε1")):
        if values.get(name, "").strip():
            request[name] = parse_number(values[name].strip(), label)
    given = [values.get("budget_epsilon", "").strip(), values.get("budget_delta", "").strip()]
    if any(given):
        if not all(given):
            raise ParameterError("give the dataset's total budget as both ε and δ, or neither")
        request["budget"] = (parse_number(given[0], "budget ε"), parse_number(given[1], "budget δ"))
        if request["budget"][1] == 0:  # the ledger would refuse the release, advising to raise a budget never set
            raise ParameterError("a total δ of 0 admits no release (every release costs some δ > 0): give a total "
                                 "δ such as 1e-5")
    return request


def release_context(record: ReleaseRecord) -> dict[str, Any]:
    """What the release page shows: the public summary (plan, guarantee, DP outputs) and, apart,
    the custodian-only report."""
    if record.publication is None:
        return {"summary": None, "facts": None}
    summary = record.publication.summary()
    custodian = record.publication.custodian_report()
    ledger = custodian.get("ledger") or None
    if ledger is not None:
        ledger = {k: v for k, v in ledger.items() if k != "dataset_identity"}
    return {"summary": summary, "facts": {**custodian, "ledger": ledger}}


def _in_app(reason: str) -> str:
    """A certificate's reason in the app's words: an unreviewed choice is confirmed on the schema
    page (the schema file is the app's private copy; the certificate keeps the command line's words)."""
    from crowdsafe.privacy.certificate import REVIEW_HINT

    # each marker's box starts "I have checked": a type's goes on "it is the type the column may hold"
    return reason.replace(REVIEW_HINT, "(check it is public, then tick its box \u201cI have checked \u2026\u201d "
                                       "on the schema page and publish again)")


def _files(record: ReleaseRecord) -> dict[str, Path]:
    return {"release": record.table, "certificate": record.certificate, "report": record.report}


def _percent_up(x: float | None) -> str:
    """A bound on a probability as a percentage to one decimal, rounded up: the text never reads
    below it (a bound of 0.89541 reads 89.6%, not 89.5%)."""
    if x is None:
        return "–"
    text = f"{100 * x:.1f}"
    if float(text) < 100 * x:
        text = f"{Decimal(text) + Decimal('0.1'):.1f}"
    return f"{text}%"


def _number(x: float | None, digits: int = 4, rounding: str = "nearest") -> str | markupsafe.Markup:
    """A number as the user writes it (``1e-6``); one in scientific notation is kept on one line
    (a browser would break ``1e-6`` after its minus sign). The ``loss`` filter rounds up (a privacy
    loss proven or spent is never shown smaller), the ``left`` filter down (a budget left)."""
    if x is None:
        return "–"
    text = write_number(x, digits, rounding)
    return markupsafe.Markup('<span class="num">{}</span>').format(text) if "e" in text else text


def _size(n: int) -> str:
    for unit, shift in (("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if n >= 1 << shift:
            return f"{n / (1 << shift):.3g} {unit}"
    return f"{n} bytes"
