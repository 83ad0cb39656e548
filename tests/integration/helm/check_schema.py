"""Checks that values.schema.json and values.yaml describe the same keys: every key of values.yaml
has a schema entry (a value added without one would be refused at install), every object the
schema lists refuses other keys (additionalProperties: false), and every key the schema lists is
in values.yaml (so values.yaml documents it), apart from `global`, which only a parent chart sets.

usage: check_schema.py values.yaml values.schema.json"""
import json
import sys

import yaml

values = yaml.safe_load(open(sys.argv[1]))
schema = json.load(open(sys.argv[2]))
failures = []


def resolve(node):
    while "$ref" in node:
        node = schema["definitions"][node["$ref"].split("/")[-1]]
    return node


def walk(value, node, path):
    node = resolve(node)
    props = node.get("properties")
    if props is None:
        return
    if node.get("additionalProperties") is not False:
        failures.append(f"{path or '(root)'}: the schema accepts unknown keys")
    if not isinstance(value, dict):
        failures.append(f"{path}: an object in the schema, {value!r} in values.yaml")
        return
    for key in value:
        if key not in props:
            failures.append(f"{path}{key}: in values.yaml, not in values.schema.json")
        else:
            walk(value[key], props[key], f"{path}{key}.")
    for key in props:
        if key not in value and not (path == "" and key == "global"):
            failures.append(f"{path}{key}: in values.schema.json, not in values.yaml")


walk(values, schema, "")
for failure in failures:
    print("FAIL " + failure)
sys.exit(1 if failures else 0)
