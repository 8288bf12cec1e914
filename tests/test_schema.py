"""Config validation: defaults filled exactly as Snakemake's validate fills them; every error one line naming the
dotted key; a misspelt key names the closest valid one."""
import copy
import json
from pathlib import Path

import pytest
import yaml

from irrepro.errors import InputError
from irrepro.schema import load_schemas, validate_config

REPO = Path(__file__).resolve().parents[1]
SCHEMAS = REPO / "workflow" / "schemas"


def _config(name="test.yaml"):
    return yaml.safe_load((REPO / "config" / name).read_text())


@pytest.mark.parametrize("name", ["test.yaml", "config.yaml"])
def test_defaults_are_filled_as_snakemake_fills_them(name):
    from snakemake.utils import validate

    a, b = _config(name), _config(name)
    validate(a, str(SCHEMAS / "config.schema.yaml"), set_default=True)
    for s in sorted(SCHEMAS.glob("*.schema.yaml")):
        if s.name != "config.schema.yaml":
            a.setdefault(s.name.split(".")[0], {})
            validate(a[s.name.split(".")[0]], str(s), set_default=True)
    validate_config(b, SCHEMAS)
    assert json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)


def test_misspelt_top_level_key_is_an_error_naming_the_closest():
    cfg = _config()
    cfg["retrival"] = {"depth": 10}
    with pytest.raises(InputError, match=r"^config key retrival: unknown key; did you mean `retrieval`\?$"):
        validate_config(cfg, SCHEMAS)


def _sections():
    return [s for s in load_schemas(SCHEMAS) if s] + [""]


@pytest.mark.parametrize("section", _sections())
def test_misspelt_key_of_every_section(section):
    schema = load_schemas(SCHEMAS)[section]
    prop = sorted(p for p in schema["properties"] if len(p) > 3)[0]
    cfg = _config()
    target = cfg.setdefault(section, {}) if section else cfg
    target[prop + "x"] = 1
    where = f"{section}.{prop}x" if section else f"{prop}x"
    with pytest.raises(InputError) as e:
        validate_config(cfg, SCHEMAS)
    msg = str(e.value)
    assert msg.startswith(f"config key {where}: unknown key; did you mean `{prop}`?") and "\n" not in msg, msg


def _bounded(schema, prefix=()):
    """(path, bad value) of every scalar key with a range or an enum."""
    for name, sub in (schema.get("properties") or {}).items():
        path = prefix + (name,)
        if "enum" in sub:
            yield path, "not-a-valid-choice"
        elif "maximum" in sub:
            yield path, sub["maximum"] + 1
        elif "minimum" in sub:
            yield path, sub["minimum"] - 1
        elif sub.get("type") == "object":
            yield from _bounded(sub, path)


@pytest.mark.parametrize("section", _sections())
def test_out_of_range_value_of_every_section(section):
    schema = load_schemas(SCHEMAS)[section]
    found = list(_bounded(schema))
    if not found:
        pytest.skip(f"{section or 'spine'}: no bounded key")
    path, bad = found[0]
    cfg = _config()
    node = cfg.setdefault(section, {}) if section else cfg
    for p in path[:-1]:
        node = node.setdefault(p, {})
    node[path[-1]] = bad
    dotted = ".".join(((section,) if section else ()) + path)
    with pytest.raises(InputError) as e:
        validate_config(copy.deepcopy(cfg), SCHEMAS)
    msg = str(e.value)
    assert msg.startswith(f"config key {dotted}: ") and "\n" not in msg, msg


def test_label_shards_defaults_and_bounds():
    cfg = _config()
    validate_config(cfg, SCHEMAS)
    assert cfg["labels"]["shards"] == {"size": None, "gpu": 0, "mem_mb": 6000, "runtime": 120}
    for bad in ({"size": 0}, {"gpu": -1}, {"sizes": 7}):
        cfg = _config()
        cfg["labels"]["shards"] = bad
        with pytest.raises(InputError, match="labels.shards"):
            validate_config(cfg, SCHEMAS)


@pytest.mark.parametrize("version", [".", "..", "../../escape", "", "a/b"])
def test_version_must_name_one_folder_inside_results(version):
    cfg = _config()
    cfg["version"] = version
    with pytest.raises(InputError, match=r"config key version"):
        validate_config(cfg, SCHEMAS)
    from irrepro.plan import check_version

    with pytest.raises(InputError, match=r"^config key version: .* one folder inside results/"):
        check_version(version)


@pytest.mark.parametrize("version", ["v1", "v1.2", "..v", "a..b", ".hidden"])
def test_version_names_that_stay_inside_results_are_accepted(version):
    from irrepro.plan import check_version

    cfg = _config()
    cfg["version"] = version
    validate_config(cfg, SCHEMAS)
    check_version(version)


JSON_SCHEMA_KEYWORDS = {
    "$schema", "$id", "$ref", "$defs", "definitions", "title", "description", "default", "examples", "type", "enum",
    "const", "properties", "additionalProperties", "patternProperties", "propertyNames", "required", "items",
    "prefixItems", "minItems", "maxItems", "uniqueItems", "contains", "minimum", "maximum", "exclusiveMinimum",
    "exclusiveMaximum", "multipleOf", "minLength", "maxLength", "pattern", "format", "minProperties",
    "maxProperties", "oneOf", "anyOf", "allOf", "not", "if", "then", "else", "dependentRequired",
    "dependentSchemas", "deprecated", "readOnly", "writeOnly",
}


def test_schema_descriptions_are_whole_sentences_not_cut_at_a_comma():
    """An unquoted description inside a YAML flow mapping ends at its first comma ("(paper 10,000)" became
    "(paper 10" and a key "000)"): every mapping under a schema uses only JSON Schema keywords, so such a cut fails."""
    from pathlib import Path

    import yaml

    def walk(node, path):
        if isinstance(node, dict):
            if "type" in node or "description" in node:
                stray = set(node) - JSON_SCHEMA_KEYWORDS
                assert not stray, f"{path}: keys {sorted(stray)} are not JSON Schema keywords (a cut description?)"
            for k, v in node.items():
                if k in ("properties", "patternProperties", "$defs", "definitions"):
                    for name, sub in v.items():
                        walk(sub, f"{path}.{name}")
                elif isinstance(v, (dict, list)) and k not in ("default", "examples", "enum", "const"):
                    walk(v, f"{path}.{k}")
        elif isinstance(node, list):
            for i, v in enumerate(node):
                walk(v, f"{path}[{i}]")

    for f in sorted((Path(__file__).parents[1] / "workflow" / "schemas").glob("*.yaml")):
        walk(yaml.safe_load(f.read_text()), f.name)


# ---- the population: grids and single systems ----

def _names(spec):
    from irrepro.retrieval.pisa import population
    return [s.name for s in population(spec)]


def test_default_population_is_the_grid_product_in_order():
    """config/config.yaml's population (grids only) expands to every combination, models in a fixed order, then
    each with RM3: the single-systems lists leave a grid-only config's systems as they were."""
    import itertools

    pop = _config("config.yaml")["population"]
    first = [f"bm25_k1-{k:g}_b-{b:g}" for k, b in itertools.product(pop["bm25"]["k1"], pop["bm25"]["b"])]
    first += ["dph"] + [f"pl2_c-{c:g}" for c in pop["pl2"]["c"]] + [f"qld_mu-{m:g}" for m in pop["qld"]["mu"]]
    r = pop["rm3"]
    rm3 = [f"{s}+rm3_fb-{r['fb_docs']}_terms-{r['fb_terms']}_lambda-{lam:g}" for s in first for lam in r["lambda"]]
    assert _names(pop) == first + rm3
    assert len(first) == 4 * 2 + 1 + 2 + 3


def test_a_single_system_beside_the_grid_adds_exactly_one():
    grid = {"bm25": {"k1": [0.9, 1.2], "b": [0.4, 0.75]}, "rm3": {"enabled": False}}
    extra = copy.deepcopy(grid)
    extra["bm25"]["systems"] = [{"k1": 1.5, "b": 0.3}]
    assert _names(extra) == _names(grid) + ["bm25_k1-1.5_b-0.3"]
    # the grid over both values of each parameter would have added four (k1 1.5 with 0.4, 0.75 ...), not one
    both = {"bm25": {"k1": [0.9, 1.2, 1.5], "b": [0.4, 0.75, 0.3]}, "rm3": {"enabled": False}}
    assert len(_names(both)) - len(_names(grid)) == 5
    alone = {"qld": {"systems": [{"mu": 750}, {"mu": 1500.5}]}, "rm3": {"enabled": True, "fb_docs": 10,
                                                                        "fb_terms": 20, "lambda": [0.5]}}
    assert _names(alone) == ["qld_mu-750", "qld_mu-1500.5", "qld_mu-750+rm3_fb-10_terms-20_lambda-0.5",
                             "qld_mu-1500.5+rm3_fb-10_terms-20_lambda-0.5"]


@pytest.mark.parametrize("spec, match", [
    ({"bm25": {"k1": [0.9], "b": [0.4], "systems": [{"k1": 0.9, "b": 0.4}]}},
     r"population.bm25.systems\[0\]: system bm25_k1-0.9_b-0.4 is already given by population.bm25"),
    ({"bm25": {"k1": [2, 2.0], "b": [0.4]}}, r"bm25_k1-2_b-0.4 is already given"),
    ({"pl2": {"systems": [{"c": 1}, {"c": 1.0}]}}, r"population.pl2.systems\[1\]: .*population.pl2.systems\[0\]"),
    ({"bm25": {"k1": [0.9]}}, r"population.bm25: a grid needs every parameter.*missing \['b'\]"),
    ({"bm25": {"systems": [{"k1": 0.9}]}}, r"population.bm25.systems\[0\]: .*exactly \['k1', 'b'\]"),
])
def test_population_given_twice_or_incomplete_is_an_error_naming_the_key(spec, match):
    with pytest.raises(InputError, match=match):
        _names(spec)


@pytest.mark.parametrize("bm25, ok", [
    ({"systems": [{"k1": 1.2, "b": 0.3}]}, True),
    ({"k1": [0.9], "b": [0.4], "systems": [{"k1": 1.2, "b": 0.3}]}, True),
    ({"k1": [0.9]}, False),                                   # a grid without b
    ({"systems": [{"k1": 1.2}]}, False),                      # a system without b
    ({"systems": [{"k1": 1.2, "b": 0.3, "c": 1}]}, False),    # a parameter BM25 does not have
    ({"systems": [{"k1": 1.2, "b": 3}]}, False),              # b out of [0, 1]
    ({"systems": []}, False),
])
def test_schema_takes_single_systems_beside_grids(bm25, ok):
    cfg = _config()
    cfg["population"] = {"bm25": bm25}
    if ok:
        validate_config(cfg, SCHEMAS)
    else:
        with pytest.raises(InputError, match="population"):
            validate_config(cfg, SCHEMAS)


@pytest.mark.parametrize("values", [[2.0, 2.5, 0.1 + 0.2, 0.3, 1e-05, 100000.0, 7]])
def test_system_names_are_distinct_per_value_and_read_back(values):
    """A whole number is written without ``.0`` (2.0 and 2 are one value); distinct values never share a name,
    and every name reads back to its values."""
    from irrepro.retrieval.pisa import System, parse_system
    systems = [System("qld", (("mu", float(v)),)) for v in values]
    names = [s.name for s in systems]
    assert len(set(names)) == len(values)
    assert [parse_system(n) for n in names] == systems
    assert names[0] == "qld_mu-2" and names[-1] == "qld_mu-7"
