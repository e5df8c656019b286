"""What the app holds between pages, and the library calls behind each step.

One :class:`Workspace` per server (the app has one user, the custodian at this machine): the
table opened (step 1), the schema under review (step 2), the releases published in this session
(steps 4 to 7). Every step calls the library's public functions (:mod:`crowdsafe.api`, the
schema draft, the planner, the ledger, the report builder, the attack), as the command line
does, so what the app writes is what ``crowdsafe publish`` writes.

Where things go:

- the private folder (``workdir``, mode 0700, removed when the app stops): uploads and the
  schema file the review writes;
- ``out_dir``: one folder per release, ``<name>-<UTC time>/``, holding the release, its
  certificate and its report (what ``crowdsafe publish --out`` writes); kept, since the ledger
  names them and the attack of a later release reads them;
- the ledger: through :class:`~crowdsafe.privacy.ledger.Ledger` and ``api.publish`` only.
"""

from __future__ import annotations

import math
import shutil
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from crowdsafe.app.forms import PublishForms
from crowdsafe.app.jobs import JobDisplay, ledger_mark, stopped_outcome
from crowdsafe.app.refusals import publish_refusal
from crowdsafe.app.tables import TableCache
from crowdsafe.errors import EMPTY_TABLE, CrowdsafeError, InputError, ParameterError
from crowdsafe.files import check_input_path

if TYPE_CHECKING:
    from crowdsafe.anonymize.publish import Publication, PublishPlan
    from crowdsafe.data import Dataset
    from crowdsafe.data.schema_draft import SchemaDraft

#: The four roles the review offers, as the schema names them, and their words on the page.
ROLES = {"identifier": "identifier", "quasi-identifier": "quasi-identifier", "sensitive": "sensitive",
         "insensitive": "other"}
#: What the open step reads (the loader reads these, compressed or not).
TABLE_SUFFIXES = (".csv", ".parquet", ".pq", ".tsv", ".txt", ".gz", ".zst")
BUNDLED = ("people", "adult")


@dataclass(frozen=True)
class Opened:
    """The table of this session: ``data`` as the library takes it (a path or a bundled name),
    ``label`` its name on the pages and in the ledger (the file's or the bundle's), ``how``
    ``bundled``, ``local`` (read in place) or ``upload`` (a copy in the private folder)."""

    data: str
    label: str
    how: str


@dataclass
class Review:
    """The schema under review: the draft as read, the roles the custodian set and the markers
    (``(column, marker)``: a role's, a type's or a hierarchy's) the custodian confirmed as public;
    ``version`` counts the saves."""

    draft: SchemaDraft
    roles: dict[str, str]
    confirmed: set[tuple[str, str]] = field(default_factory=set)
    version: int = 0

    def effective(self) -> SchemaDraft:
        """The draft with the custodian's roles and confirmations: the schema file's content. An
        identifier or other column keeps no hierarchy (nothing of it is generalized), and an
        identifier no type marker (no release publishes it; set back, it has its markers again)."""
        from crowdsafe.data.schema import Role

        attributes = []
        for a in self.draft.attributes:
            role = Role(self.roles.get(a.name, a.role.value))
            hierarchy = a.hierarchy
            # a role the values chose stays marked until confirmed, or until the custodian sets another one
            roled = () if role is not a.role else tuple(
                m for m in a.role_from_data if (a.name, m) not in self.confirmed)
            typed = () if role is Role.IDENTIFIER else tuple(
                m for m in a.type_from_data if (a.name, m) not in self.confirmed)
            if role in (Role.IDENTIFIER, Role.INSENSITIVE):
                hierarchy = None
            elif hierarchy is not None:
                left = tuple(m for m in hierarchy.from_data if (a.name, m) not in self.confirmed)
                hierarchy = replace(hierarchy, from_data=left)
            attributes.append(replace(a, role=role, hierarchy=hierarchy, type_from_data=typed, role_from_data=roled))
        return replace(self.draft, attributes=tuple(attributes))


@dataclass
class ReleaseRecord:
    """One publish of this session: its request, its job's state and, when done, the publication
    and the files written. ``attack``: the last attack run on it (step 6)."""

    number: int
    label: str
    request: dict[str, Any]
    folder: Path
    table: Path
    started: float = field(default_factory=time.monotonic)
    status: str = "running"  # running, done, failed
    finished: float | None = None
    error: str | None = None
    publication: Publication | None = None
    display: JobDisplay = field(default_factory=JobDisplay)
    attack: dict[str, Any] | None = None
    #: the table and the schema it was published from (a copy in the private folder): its attack
    #: and its ledger entries read them, whatever table is open later
    opened: Opened | None = None
    schema: Path | None = None
    #: the ledger's last entry when it started (a stopped publish's charge is looked up after it)
    ledger_mark: int = 0
    stopped: bool = False  # stopped as the app stopped (``error`` says what that left)
    #: set once the job has ended (done or failed): its progress page is told at once
    ended: threading.Event = field(default_factory=threading.Event, repr=False, compare=False)

    @property
    def certificate(self) -> Path:
        from crowdsafe.anonymize.release import certificate_path

        return Path(certificate_path(self.table))

    @property
    def report(self) -> Path:
        from crowdsafe.report.build import report_path

        return Path(report_path(self.table))

    def elapsed(self) -> float:
        return (self.finished or time.monotonic()) - self.started


class Workspace:
    """The session's state and steps (module docstring)."""

    def __init__(self, workdir: Path, out_dir: Path, *, ledger: Path | None = None, seed: int | None = None,
                 max_upload: int = 4 << 30) -> None:
        self.workdir = workdir
        self.out_dir = out_dir
        self.ledger = ledger
        self.seed = seed
        self.max_upload = max_upload
        self.lock = threading.RLock()
        self.opened: Opened | None = None
        self.review: Review | None = None
        self.releases: dict[int, ReleaseRecord] = {}
        self.plan_values: dict[str, str] = {}  # the plan form as last accepted (its parameters only)
        self.forms = PublishForms()  # one-time tokens of the plan form (crowdsafe.app.forms)
        self._uploads = 0
        self._stopping = threading.Event()  # set when the app stops: see stop_publishes
        self._workers: list[threading.Thread] = []
        self.tables = TableCache()  # tables read with a schema, while neither changes (crowdsafe.app.tables)

    # -- step 1: open ------------------------------------------------------------------------
    def upload_folder(self) -> Path:
        """A new private folder for one upload, inside the workdir (0700 like it)."""
        with self.lock:
            self._uploads += 1
            folder = self.workdir / "uploads" / str(self._uploads)
        folder.mkdir(parents=True, mode=0o700)
        return folder

    def open_bundled(self, name: str) -> Opened:
        from crowdsafe.datasets import names

        if name not in names():
            raise ParameterError(f"no bundled dataset named {name!r}; choose one of: {', '.join(names())}")
        return self._open(Opened(name, name, "bundled"), *_declared(name))

    def open_local(self, text: str) -> Opened:
        """A local file, read in place (nothing is copied: a large file streams as on the command line)."""
        path = Path(text.strip()).expanduser()
        if not text.strip():
            raise ParameterError("give the path of a CSV or Parquet file")
        check_input_path(path)  # a name too long for the system: a 400 page, not an OSError
        if not path.exists():
            raise InputError(f"no file at {path}")
        if not path.is_file():
            raise InputError(f"{path} is not a file (a CSV or Parquet file is read)")
        return self._open(Opened(str(path.resolve()), path.name, "local"))

    def open_upload(self, path: Path, name: str) -> Opened:
        return self._open(Opened(str(path), name, "upload"))

    def _open(self, opened: Opened, declared: Mapping[str, str] | None = None,
              declared_columns: Mapping[str, dict[str, Any]] | None = None) -> Opened:
        """Draft the schema of ``opened`` and start its review; ``declared``: roles a bundled
        table declares (public), which the review starts from instead of the draft's (the draft
        would make every column that is not an identifier a quasi-identifier: Adult's 15 columns
        give a lattice the selection takes minutes over, its declared 8 one of seconds);
        ``declared_columns``: what it declares of each column, its type and hierarchy (its own,
        used by the release: :func:`_declared`), in place of the draft's read from its values."""
        from crowdsafe.data.schema_draft import draft_schema

        draft = draft_schema(opened.data, label=opened.label)
        if draft.rows == 0:  # refused here, as the command line refuses it, not at every later step
            shown = opened.data if opened.how == "local" else opened.label  # never an upload's private copy
            raise InputError(f"{shown} has a header but no rows" + EMPTY_TABLE)
        if declared_columns:
            draft = replace(draft, attributes=tuple(
                replace(a, **_declared_notes(a, declared_columns[a.name])) if a.name in declared_columns else a
                for a in draft.attributes))
        roles = {a.name: a.role.value for a in draft.attributes}
        roles.update((name, role) for name, role in (declared or {}).items() if name in roles)
        review = Review(draft, roles)
        with self.lock:
            self.opened, self.review = opened, review
        self.save_schema(review)
        return opened

    # -- step 2: the schema --------------------------------------------------------------------
    @property
    def schema_path(self) -> Path:
        return self.workdir / "schema.toml"

    def require(self) -> tuple[Opened, Review]:
        with self.lock:
            if self.opened is None or self.review is None:
                raise LookupError("no table is open")
            return self.opened, self.review

    def save_schema(self, review: Review) -> Path:
        """Write the reviewed schema (TOML, :mod:`crowdsafe.data.schema_toml`) atomically into
        the private folder; every later step reads it."""
        from crowdsafe.files import write_text_atomic

        with self.lock:
            review.version += 1
            write_text_atomic(self.schema_path, review.effective().to_toml())
        return self.schema_path

    def update_review(self, roles: Mapping[str, str], confirmed: set[tuple[str, str]]) -> None:
        _, review = self.require()
        names = {a.name for a in review.draft.attributes}
        markers = {(a.name, m) for a in review.draft.attributes for m in a.from_data}
        for name, role in roles.items():
            if name not in names or role not in ROLES:
                raise ParameterError(f"unknown column or role: {name!r} = {role!r}")
        with self.lock:
            review.roles.update(roles)
            review.confirmed = {c for c in confirmed if c in markers}
        self.save_schema(review)

    def domain(self) -> Dataset:
        """The table read with the saved schema (its hierarchies and roles; for a file larger than
        memory its distinct values), read again once the schema or the file changes (:attr:`tables`)."""
        opened, _ = self.require()
        return self.tables.domain(opened.data, self.schema_path)

    def plan_facts(self, plan: PublishPlan) -> list[tuple[str, str]]:
        """The plan's custodian-only lines (the table's size, the expected sample, the finest
        resolution its classes could reach, or the warning that not even the coarse preset fits),
        as ``publish --plan-only`` prints them (:func:`~crowdsafe.anonymize.publish.plan_fact_lines`)."""
        from crowdsafe.anonymize.publish import plan_fact_lines, resolution_outlook

        opened, _ = self.require()
        rows = self.tables.rows(opened.data, self.schema_path)
        prepared, published, _ = self.tables.prepared(opened.data, self.schema_path)
        return plan_fact_lines({"input_rows": rows, "expected_sample_rows": plan.expected_sample_rows(rows),
                                "resolution": resolution_outlook(prepared, published, plan, rows)})

    # -- step 3: the plan and the ledger ---------------------------------------------------------
    def plan(self, request: Mapping[str, Any]) -> PublishPlan:
        """The plan ``api.publish`` would run for ``request`` (ε, δ and optional k, β, ε1): the
        planner, with the lattice's size from the hierarchies' heights (public)."""
        from crowdsafe.anonymize.plan import PlanRequest
        from crowdsafe.anonymize.publish import plan_for_dataset

        return plan_for_dataset(self.domain(), PlanRequest(
            request["epsilon"], request["delta"], k=request.get("k"), beta=request.get("beta"),
            epsilon1=request.get("epsilon1")))

    def unconfirmed(self) -> list[str]:
        """Why a release of the open table with the saved schema would be certified not fit for
        release because of the schema, one line per column (``'PLZ': hierarchy mask depth``): its
        unconfirmed ``from_data`` markers of the published columns, and the role markers (what
        ``publish --plan-only`` warns about). From the schema alone."""
        opened, _ = self.require()
        dataset = self.domain()
        _, published, _ = self.tables.prepared(opened.data, self.schema_path)
        return [f"{column!r}: {', '.join(read)}" for column, read in dataset.schema.unreviewed(published).items()]

    def ledger_path(self) -> Path:
        if self.ledger is not None:
            return self.ledger
        from crowdsafe.privacy.ledger_storage import default_ledger_path

        return default_ledger_path()

    def ledger_view(self, record: ReleaseRecord | None = None) -> dict[str, Any]:
        """The dataset's budget and earlier entries in the ledger (custodian-only: which entries
        are this table's is read from the data, by its keyed identity): the open table's, or the
        table ``record`` was published from. Opens no ledger that does not exist yet."""
        path = self.ledger_path()
        view: dict[str, Any] = {"path": str(path), "exists": path.exists(), "budget": None, "entries": []}
        if not path.exists():
            return view
        from crowdsafe.privacy.ledger import Ledger

        with Ledger(path) as book:
            identity = self._identity_in(book) if record is None else self._record_identity(book, record)
            budget = book.budget(identity)
            if budget is None:
                return view
            view["budget"] = {k: v for k, v in budget.as_dict().items() if k != "fingerprint"}
            view["entries"] = [_entry(e) for e in book.entries(identity)]
        return view

    def _identity_in(self, book: Any) -> str:
        """The table's identity in ``book``: its fingerprint keyed with the ledger's secret, as
        ``api.publish`` charges it (the table as read with the schema; roles do not change it)."""
        opened, _ = self.require()
        return self.tables.identity(opened.data, self.schema_path, book)

    def _record_identity(self, book: Any, record: ReleaseRecord) -> str:
        """The identity in ``book`` of the table ``record`` was published from (with its schema)."""
        assert record.opened is not None and record.schema is not None
        return self.tables.identity(record.opened.data, record.schema, book)

    def record_domain(self, record: ReleaseRecord) -> Dataset:
        """The table ``record`` was published from, read with its schema (its distinct values for a
        file larger than memory), read again once the file changes (:attr:`tables`)."""
        assert record.opened is not None and record.schema is not None
        return self.tables.domain(record.opened.data, record.schema)

    # -- step 4: publish -------------------------------------------------------------------------
    def issue_form(self) -> str:
        """A one-time token for a plan form (:mod:`crowdsafe.app.forms`)."""
        with self.lock:
            return self.forms.issue()

    def start_publish(self, request: Mapping[str, Any], form: str | None = None) -> ReleaseRecord:
        """Check ``request`` (refused before anything runs), then publish in a worker thread.
        ``form``: the plan form's one-time token, spent here with the release's start (a form
        already spent raises :class:`~crowdsafe.app.forms.AlreadyStarted`: nothing starts)."""
        from crowdsafe.anonymize.plan import PlanRequest, check_publication

        opened, _ = self.require()
        if self._stopping.is_set():
            raise ParameterError("the app is stopping: no publish starts now")
        if form is not None:
            with self.lock:
                self.forms.check(form)  # a repeat is told at once, before the checks below
        check_publication(PlanRequest(request["epsilon"], request["delta"], k=request.get("k"),
                                      beta=request.get("beta"), epsilon1=request.get("epsilon1")), lattice_later=True)
        self.plan(request)  # the planner's refusals (a δ it cannot reach) before a job starts
        stem = _stem(opened.label)
        with self.lock:
            if form is not None:
                self.forms.check(form)  # again, atomically with the start: two identical posts start one
            number = len(self.releases) + 1
            stamp = time.strftime("%Y%m%d-%H%M%S", time.gmtime())
            folder = self.out_dir / f"{stem}-{stamp}-{number}"
            schema = self.workdir / f"schema-release-{number}.toml"
            shutil.copyfile(self.schema_path, schema)
            record = ReleaseRecord(number, opened.label, dict(request), folder, folder / f"{stem}.csv",
                                   opened=opened, schema=schema, ledger_mark=ledger_mark(self.ledger_path()))
            self.releases[number] = record
            if form is not None:
                self.forms.spend(form, number)
            worker = threading.Thread(target=self._publish, args=(record, opened), name=f"publish-{number}",
                                      daemon=True)
            self._workers.append(worker)
        worker.start()
        return record

    def running(self) -> int:
        """How many publishes are running."""
        with self.lock:
            return sum(w.is_alive() for w in self._workers)

    def stop_publishes(self, timeout: float | None = None) -> int:
        """Ask every running publish to stop and wait for them (at most ``timeout`` seconds; None:
        as long as they take). A publish stops at its next checkpoint (:mod:`crowdsafe.stopping`):
        its ledger entry, if charged, is marked failed, and no file of it is left; one that has
        started writing its files finishes them. No publish starts after this. Returns how many
        are still running."""
        self._stopping.set()
        with self.lock:
            workers = list(self._workers)
        deadline = None if timeout is None else time.monotonic() + timeout
        for worker in workers:
            worker.join(None if deadline is None else max(0.0, deadline - time.monotonic()))
        return self.running()

    def _publish(self, record: ReleaseRecord, opened: Opened) -> None:
        from crowdsafe import api
        from crowdsafe.progress import showing
        from crowdsafe.stopping import JobStopped, stoppable

        request = record.request
        seed = None if self.seed is None else self.seed + record.number - 1
        try:
            with stoppable(self._stopping), showing(record.display):
                publication = api.publish(
                    opened.data, epsilon=request["epsilon"], delta=request["delta"], k=request.get("k"),
                    beta=request.get("beta"), epsilon1=request.get("epsilon1"), schema=str(record.schema),
                    out=str(record.table), seed=seed,
                    ledger=str(self.ledger) if self.ledger is not None else "default",
                    name=opened.label, budget=request.get("budget"))
            record.publication = publication
            record.status = "done"
        except JobStopped:
            record.error = stopped_outcome(self.ledger_path(), record.ledger_mark, opened.label)
            record.status, record.stopped = "failed", True
        except CrowdsafeError as exc:
            record.error = publish_refusal(exc, lambda: self.ledger_view(record)["budget"], self.ledger_path())
            record.status = "failed"
        except Exception as exc:  # a bug: said on the page by its kind, never its message (it may hold data)
            record.error, record.status = f"internal error ({type(exc).__name__})", "failed"
        finally:
            record.finished = time.monotonic()
            record.ended.set()

    def release(self, number: int) -> ReleaseRecord:
        with self.lock:
            record = self.releases.get(number)
        if record is None:
            raise LookupError(f"no release {number}")
        return record

    # -- step 6: attack --------------------------------------------------------------------------
    def earlier_releases(self, record: ReleaseRecord) -> list[dict[str, Any]]:
        """This dataset's earlier releases in the ledger (those of this session included), each
        with its table's path and whether it can still be read."""
        view = self.ledger_view(record)
        found = []
        for entry in view["entries"]:
            if entry["kind"] != "dps-release":
                continue
            for table in entry["tables"]:
                path = Path(table)
                if path.resolve() == record.table.resolve():
                    continue
                found.append({"entry": entry["id"], "path": str(path), "name": path.name,
                              "when": entry["created_at"], "exists": path.is_file()})
        return found

    def run_attack(self, record: ReleaseRecord, sensitive: str, earlier: list[str]) -> dict[str, Any]:
        """The intersection (composition) attack on this release and the chosen earlier ones,
        with this table as the targets (its true values score the attack: custodian-only), beside
        the bound the releases' certificates give together."""
        from crowdsafe import api
        from crowdsafe.report.build import read_certificate

        if record.status != "done" or record.opened is None or record.schema is None:
            raise ParameterError("the release is not published yet")
        opened = record.opened  # its own table, whatever is open now
        published = _published_columns(read_certificate(record.table))
        if sensitive not in published:
            raise ParameterError(f"'{sensitive}' is not a column of the release")
        qi = [c for c in published if c != sensitive]
        if not qi:
            raise ParameterError("the release has no other column for the attacker to know")
        allowed = {e["path"]: e for e in self.earlier_releases(record) if e["exists"]}
        tables, names, skipped = [record.table], [f"this release ({record.table.name})"], []
        for path in earlier:
            if path not in allowed:
                continue
            name = f"ledger entry #{allowed[path]['entry']} ({Path(path).name})"
            columns = _published_columns(read_certificate(path))
            missing = [c for c in [*qi, sensitive] if c not in columns]
            if missing:
                skipped.append({"name": name, "why": f"does not publish {', '.join(missing)}"})
            else:
                tables.append(Path(path))
                names.append(name)
        certificates = [read_certificate(t) for t in tables]
        # the table read with the release's schema, as api.attack would read it from the path (a
        # Dataset is taken as it is); a table streamed batch by batch is read by the attack itself
        from crowdsafe.data import Dataset

        read = self.tables.table(opened.data, record.schema)
        targets, schema = (read, None) if isinstance(read, Dataset) else (opened.data, str(record.schema))
        result = api.attack([str(t) for t in tables], targets, qi=qi, sensitive=sensitive, schema=schema)
        # a release without an (ε, δ) (no formal guarantee) leaves the releases together with none
        guaranteed = all(c.get("epsilon") is not None and c.get("delta") is not None for c in certificates)
        epsilon = math.fsum(float(c["epsilon"]) for c in certificates) if guaranteed else None
        delta = math.fsum(float(c["delta"]) for c in certificates) if guaranteed else None
        summary = result.as_dict()["summary"]
        prior = _most_common_share(self.record_domain(record), sensitive)
        outcome = {
            "sensitive": sensitive, "qi": qi, "releases": names, "skipped": skipped,
            "epsilon": epsilon, "delta": delta,
            "summary": summary, "per_release": result.as_dict()["releases"], "prior": prior,
            "posterior_bound": None if prior is None or epsilon is None or delta is None
            else min(1.0, posterior_bound(prior, epsilon) + delta),
        }
        record.attack = outcome
        return outcome



def _most_common_share(dataset: Dataset, column: str) -> float | None:
    """The share of the table's most common value of ``column`` (custodian-only): how often an
    attacker who knows nothing of a person would be right by naming that value."""
    if column not in dataset.columns or dataset.n_rows == 0:
        return None
    counts = dataset.frame.get_column(column).value_counts(sort=True)
    return float(counts.get_column("count")[0]) / dataset.n_rows


def _declared(name: str) -> tuple[dict[str, str], dict[str, dict[str, Any]]]:
    """What the bundled table ``name`` declares (its schema and hierarchies: public, fixed before
    any row is read): its roles by column (empty when it declares none), and per column what the
    review takes from it instead of the draft: its type (and order), unmarked, and, where it has
    a hierarchy, a suggestion without a specification that stands for it (the schema file then
    names none, so the release uses the table's own: the one the review shows)."""
    from crowdsafe.data.hierarchy_draft import HierarchySuggestion
    from crowdsafe.data.schema import AttributeType
    from crowdsafe.datasets import bundled_source

    source = bundled_source(name)
    roles: dict[str, str] = {}
    columns: dict[str, dict[str, Any]] = {}
    for a in source.schema.attributes if source.schema is not None else ():
        if a.role.value in ROLES:
            roles[a.name] = a.role.value
        columns[a.name] = {"type": a.type, "order": a.order, "type_from_data": (),
                           "numbers": a.numbers if a.type is AttributeType.NUMERIC else None}
    for column, h in source.hierarchies.items():
        columns.setdefault(column, {})["hierarchy"] = HierarchySuggestion({}, "declared by the bundled table", (
            f"the bundled table's own, {h.height} level{'s' if h.height != 1 else ''} above the value (public, "
            "fixed before any row is read)",))
    return roles, columns


def _declared_notes(attribute: Any, declared: Mapping[str, Any]) -> dict[str, Any]:
    """``declared`` (:func:`_declared`), with the draft's notes less those saying the values chose
    the type when the type is declared ("categorical: its values were read as text ... (from the
    data)" beside Adult's declared ordinal education)."""
    if "type" not in declared:
        return dict(declared)
    return {**declared, "notes": tuple(n for n in attribute.notes if "(from the data" not in n)}


def posterior_bound(prior: float, epsilon: float) -> float:
    """The largest probability of a guess right with probability ``prior`` without the release,
    once the odds may grow by e^ε: p·e^ε / (1 − p + p·e^ε)."""
    grown = prior * math.exp(epsilon)
    return grown / (1.0 - prior + grown)


def _published_columns(certificate: Mapping[str, Any]) -> list[str]:
    parameters = certificate.get("parameters") or {}
    return [str(c) for c in parameters.get("quasi_identifiers") or []]


def _entry(entry: Any) -> dict[str, Any]:
    """A ledger entry as the pages show it: what was charged, when and for what, and the tables
    it wrote (no identity, no sample digest)."""
    written = entry.outcome.get("written") or []
    return {"id": entry.id, "kind": entry.kind, "created_at": entry.created_at[:19].replace("T", " "),
            "epsilon": entry.loss.epsilon, "delta": entry.loss.delta, "description": entry.description,
            "status": entry.status, "seeded": entry.seeded, "tables": [str(t) for t in written]}


def _stem(label: str) -> str:
    """A file-name stem from the table's name (letters, digits, '-', '_' and '.'; 'data' when none)."""
    stem = label
    for suffix in (".gz", ".zst", ".csv", ".tsv", ".txt", ".parquet", ".pq"):
        if stem.lower().endswith(suffix):
            stem = stem[: -len(suffix)]
    kept = "".join(c if c.isalnum() or c in "-_." else "_" for c in stem).strip("._")
    return kept[:60] or "data"
