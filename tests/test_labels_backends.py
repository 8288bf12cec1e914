"""The labeler backends' registry (irrepro.labels.backends): every name resolves to a module that declares its keys
and makes its labeler, the config schema offers exactly these names, and make_labeler reads the declarations."""
from pathlib import Path
from types import SimpleNamespace

import pytest
import yaml

from irrepro.errors import InputError
from irrepro.labels import make_labeler
from irrepro.labels.backends import BACKENDS, backend
from irrepro.labels.factory import calibration_of

SCHEMA = Path(__file__).resolve().parents[1] / "workflow" / "schemas" / "labels.schema.yaml"


def declaration_problems(name: str, module) -> list[str]:
    """What a backend module lacks of the declaration make_labeler reads."""
    bad = []
    keys = getattr(module, "KEYS", None)
    if not isinstance(keys, frozenset) or not all(isinstance(k, str) for k in keys):
        bad.append(f"{name}: KEYS must be a frozenset of config keys")
        keys = frozenset()
    required = getattr(module, "REQUIRED", None)
    if not isinstance(required, tuple) or not set(required) <= keys:
        bad.append(f"{name}: REQUIRED must be a tuple of keys among KEYS")
    if not callable(getattr(module, "make", None)):
        bad.append(f"{name}: no make(spec)")
    cal = getattr(module, "CALIBRATION", None)
    if cal is not None and not set(cal) <= keys:
        bad.append(f"{name}: CALIBRATION keys must be among KEYS")
    return bad


@pytest.mark.parametrize("name", sorted(BACKENDS))
def test_every_backend_declares_its_keys_and_labeler(name):
    assert declaration_problems(name, backend(name)) == []


def test_the_declaration_check_fails_on_a_module_that_lacks_one():
    ok = SimpleNamespace(KEYS=frozenset({"path"}), REQUIRED=("path",), make=lambda spec: None)
    assert declaration_problems("x", ok) == []
    assert declaration_problems("x", SimpleNamespace(REQUIRED=(), make=len))  # no KEYS
    assert declaration_problems("x", SimpleNamespace(KEYS=frozenset(), REQUIRED=("path",), make=len))
    assert declaration_problems("x", SimpleNamespace(KEYS=frozenset({"a"}), REQUIRED=()))  # no make
    assert declaration_problems("x", SimpleNamespace(KEYS=frozenset({"a"}), REQUIRED=(), make=len,
                                                     CALIBRATION={"folds": 5}))


def test_the_schema_offers_exactly_the_registered_backends():
    schema = yaml.safe_load(SCHEMA.read_text())
    enums = []

    def walk(node):
        if isinstance(node, dict):
            if "backend" in node and isinstance(node["backend"], dict) and "enum" in node["backend"]:
                enums.append(node["backend"]["enum"])
            for v in node.values():
                walk(v)
        elif isinstance(node, list):
            for v in node:
                walk(v)

    walk(schema)
    assert enums and all(sorted(e) == sorted(BACKENDS) for e in enums), enums


def test_make_labeler_reads_each_declaration(tmp_path):
    assert make_labeler({"backend": "hash", "seed": 3}).seed == 3
    with pytest.raises(InputError, match=r"unknown key\(s\) \['path'\]"):
        make_labeler({"backend": "hash", "path": "x"})  # a key of another backend
    with pytest.raises(InputError, match=r"missing required key\(s\) \['path'\]"):
        make_labeler({"backend": "file"})
    with pytest.raises(InputError, match="expected one of"):
        make_labeler({"backend": "nope"})
    assert calibration_of({"backend": "biencoder", "folds": 3}) == {"folds": 3, "calibration_seed": 0}
    assert calibration_of({"backend": "hash"}) is None and calibration_of({"backend": "nope"}) is None
