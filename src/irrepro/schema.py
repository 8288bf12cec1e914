"""Validate a workflow config against its JSON schemas (``workflow/schemas/``) and fill the defaults.

The spine's schema (``config.schema.yaml``) checks the top level; each paper section (``bv``, ``sampling``,
``labels``, ``ci``, ``vb``) is checked by ``<section>.schema.yaml``. Defaults are filled as Snakemake's
``snakemake.utils.validate(..., set_default=True)`` fills them (the jsonschema FAQ recipe). Unlike it, an error is one
line naming the dotted key, e.g. ``config key ci.alpha: 1.5 is greater than the maximum of 0.5``, and an unknown key
names the closest valid one (``config key retrival: unknown key; did you mean `retrieval`?``).
"""
from __future__ import annotations

import difflib
from pathlib import Path

import yaml

from irrepro.errors import InputError

SPINE = "config.schema.yaml"


def _default_filling_validator(schema, registry=None):
    from jsonschema import Draft202012Validator, validators

    props = Draft202012Validator.VALIDATORS["properties"]

    def set_defaults(validator, properties, instance, schema):
        if isinstance(instance, dict):
            for prop, sub in properties.items():
                if "default" in sub:
                    instance.setdefault(prop, sub["default"])
        yield from props(validator, properties, instance, schema)

    cls = validators.extend(Draft202012Validator, {"properties": set_defaults})
    return cls(schema) if registry is None else cls(schema, registry=registry)


def _registry(schemas):
    """The schemas by file name, so that a ``$ref`` to ``config.schema.yaml#/$defs/name`` resolves as Snakemake's
    validate resolves it (relative to the schema file)."""
    from referencing import Registry, Resource
    from referencing.jsonschema import DRAFT202012

    return Registry().with_resources(
        (f"{section}.schema.yaml" if section else SPINE, Resource.from_contents(schema, DRAFT202012))
        for section, schema in schemas.items())


def _subschema(schema, path):
    """The schema node that describes ``path`` (keys into objects; additionalProperties for named entries)."""
    node = schema
    for p in path:
        if not isinstance(node, dict):
            return {}
        if isinstance(p, int):
            node = node.get("items", {})
        elif p in (node.get("properties") or {}):
            node = node["properties"][p]
        elif isinstance(node.get("additionalProperties"), dict):
            node = node["additionalProperties"]
        else:
            return {}
    return node


def _key(prefix, path):
    out = prefix
    for p in path:
        out = f"{out}[{p}]" if isinstance(p, int) else (f"{out}.{p}" if out else str(p))
    return out or "(top level)"


def _message(err, schema, prefix):
    path = list(err.absolute_path)
    if "propertyNames" in err.schema_path and err.validator == "pattern":  # a name: what it may be
        why = " ".join(str(err.schema.get("description", "")).split())
        return f"config key {_key(prefix, path)}: name {err.instance!r} does not match {err.validator_value!r}" + \
            (f": {why}" if why else "")
    if err.validator in ("anyOf", "oneOf") and err.schema.get("description"):  # alternatives: the key's meaning
        why = " ".join(str(err.schema["description"]).split())
        return f"config key {_key(prefix, path)}: {err.instance!r} is not one of the values it takes: {why}"
    if err.validator == "additionalProperties" and isinstance(err.instance, dict):
        allowed = list((_subschema(schema, path).get("properties") or {}))
        extra = [k for k in err.instance if k not in allowed]
        if extra:
            k = extra[0]
            close = difflib.get_close_matches(str(k), allowed, n=1)
            hint = f"did you mean `{close[0]}`?" if close else f"valid keys: {', '.join(allowed)}"
            return f"config key {_key(prefix, path + [k])}: unknown key; {hint}"
    return f"config key {_key(prefix, path)}: {err.message}"


def _check(instance, schema, prefix, registry=None):
    v = _default_filling_validator(schema, registry)
    errors = sorted(v.iter_errors(instance), key=lambda e: (len(list(e.absolute_path)), str(list(e.absolute_path))))
    if errors:
        raise InputError(_message(errors[0], schema, prefix))


def _load_yaml(text: str):
    """``yaml.safe_load`` by libyaml's parser where PyYAML has it (the same objects, ~8x faster: the schemas are read
    at every Snakemake start, which a cluster job makes twice)."""
    return yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))


def load_schemas(schema_dir) -> dict:
    """``{section: schema}`` with the spine's under ``""``."""
    schema_dir = Path(schema_dir)
    out = {"": _load_yaml((schema_dir / SPINE).read_text())}
    for p in sorted(schema_dir.glob("*.schema.yaml")):
        if p.name != SPINE:
            out[p.name.split(".")[0]] = _load_yaml(p.read_text())
    return out


def validate_config(config: dict, schema_dir) -> dict:
    """Check ``config`` in place against the spine's and every section's schema, filling defaults; returns it."""
    schemas = load_schemas(schema_dir)
    spine = schemas[""]
    allowed = list(spine.get("properties", {})) + [s for s in schemas if s]
    for k in config:
        if k not in allowed:
            close = difflib.get_close_matches(str(k), allowed, n=1)
            hint = f"did you mean `{close[0]}`?" if close else f"valid keys: {', '.join(allowed)}"
            raise InputError(f"config key {k}: unknown key; {hint}")
    registry = _registry(schemas)
    _check(config, spine, "", registry)
    for section, schema in schemas.items():
        if section:
            config.setdefault(section, {})
            if config[section] is None:
                config[section] = {}
            _check(config[section], schema, section, registry)
    return config
