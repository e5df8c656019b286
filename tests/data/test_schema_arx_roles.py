"""A schema written by an ARX or sdcMicro user: the roles under ARX's names (identifying,
quasi-identifying, and the ``*_ATTRIBUTE`` spelling of its attribute types) read as crowdsafe's
roles; an attribute without a type is refused naming the types to write, and a "key" role saying
what an sdcMicro key variable is here (not guessed: a record's key is an identifier)."""

from __future__ import annotations

import pytest

from crowdsafe.data import Role, Schema
from crowdsafe.errors import SchemaError


@pytest.mark.parametrize(("written", "role"), [
    ("identifying", Role.IDENTIFIER), ("IDENTIFYING_ATTRIBUTE", Role.IDENTIFIER),
    ("quasi-identifying", Role.QUASI_IDENTIFIER), ("QUASI_IDENTIFYING_ATTRIBUTE", Role.QUASI_IDENTIFIER),
    ("SENSITIVE_ATTRIBUTE", Role.SENSITIVE), ("insensitive_attribute", Role.INSENSITIVE),
])
def test_arx_role_names_are_read(tmp_path, written, role):
    path = tmp_path / "s.toml"
    path.write_text(f"[attributes.a]\nrole = '{written}'\ntype = 'categorical'\n")
    assert Schema.from_toml(path)["a"].role is role


def test_an_attribute_without_a_type_is_told_which_to_write(tmp_path):
    path = tmp_path / "s.toml"
    path.write_text("[attributes.diagnosis]\nrole = 'sensitive'\n")  # an identifier's type is optional
    with pytest.raises(SchemaError, match=r"has no type; add a line type = .*categorical.*integer.*date"):
        Schema.from_toml(path)


@pytest.mark.parametrize("written", ["key", "key variable", "keyVar"])
def test_an_sdcmicro_key_variable_is_refused_saying_what_it_is(tmp_path, written):
    path = tmp_path / "s.toml"  # "key" alone could be a record's key (an identifier): not guessed
    path.write_text(f"[attributes.a]\nrole = '{written}'\ntype = 'categorical'\n")
    with pytest.raises(SchemaError, match=r"unknown role .*key variables are quasi-identifiers; a record's key is"):
        Schema.from_toml(path)
