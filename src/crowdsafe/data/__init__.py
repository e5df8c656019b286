"""The data layer: tables, their schema, hierarchies, encoding and frequency tables.

It knows nothing of privacy. What other layers may rely on is listed in
``docs/architecture.md`` ("Data layer contract").
"""

from crowdsafe.data.builders import dates, flat, grouping, intervals, masking, ordered_groups
from crowdsafe.data.dataset import Dataset
from crowdsafe.data.encoding import EncodedColumn, Encoding, encode, encode_series
from crowdsafe.data.frequency import COUNT, class_sizes, code_frequencies, frequency_table
from crowdsafe.data.hierarchy import Hierarchy
from crowdsafe.data.io import read_table, write
from crowdsafe.data.missing import (
    DEFAULT_MISSING,
    DEFAULT_MISSING_TOKENS,
    MissingPolicy,
    MissingReport,
    apply_missing_policy,
)
from crowdsafe.data.pipeline import load
from crowdsafe.data.schema import Attribute, AttributeType, NumberKind, Role, Schema

__all__ = [
    "COUNT",
    "DEFAULT_MISSING",
    "DEFAULT_MISSING_TOKENS",
    "Attribute",
    "AttributeType",
    "NumberKind",
    "Dataset",
    "EncodedColumn",
    "Encoding",
    "Hierarchy",
    "MissingPolicy",
    "MissingReport",
    "Role",
    "Schema",
    "apply_missing_policy",
    "class_sizes",
    "code_frequencies",
    "dates",
    "encode",
    "encode_series",
    "flat",
    "frequency_table",
    "grouping",
    "intervals",
    "load",
    "masking",
    "ordered_groups",
    "read_table",
    "write",
]
