#!/usr/bin/env python3
"""Renders a `swift-api-digester -dump-sdk` JSON dump as sorted text, one public declaration a
line (its path, kind, signature, and for types their conformances and attributes), so that a
change of the public surface is a readable diff (scripts/api-dump.sh).

Usage: scripts/api-text.py DUMP.json > MODULE.txt
"""

import json
import sys

DECLARATIONS = {"TypeDecl", "Var", "Function", "Constructor", "Subscript", "TypeAlias", "AssociatedType"}
QUIET_CONFORMANCES = {"Copyable", "Escapable", "SendableMetatype", "BitwiseCopyable"}


def signature(node):
    """The declaration's type, from its type children: `(parameters) -> result`."""
    types = [c for c in node.get("children", []) if c.get("kind", "").startswith("Type") and c["kind"] != "TypeDecl"]
    if not types:
        return ""
    if node["kind"] in ("Function", "Constructor", "Subscript"):
        result, parameters = types[0], types[1:]
        return "(" + ", ".join(t.get("printedName", "?") for t in parameters) + ") -> " + result.get("printedName", "?")
    return ": " + types[0].get("printedName", "?")


def walk(node, path, lines):
    for child in node.get("children", []):
        kind = child.get("kind")
        if kind not in DECLARATIONS:
            continue
        # `package` declarations are in the module too (for the package's other modules): the
        # dump marks them, and they are not the public surface.
        if child.get("isInternal"):
            continue
        name = child.get("printedName", child.get("name", "?"))
        full = path + [name]
        flags = []
        if child.get("declKind"):
            flags.append(child["declKind"].lower())
        if child.get("static"):
            flags.append("static")
        if child.get("throwing"):
            flags.append("throws")
        # The dump has no async flag: the mangled function type says it (`Ya`).
        if kind in ("Function", "Constructor") and "Ya" in child.get("mangledName", ""):
            flags.append("async")
        if child.get("mutating") or child.get("funcSelfKind") == "Mutating":
            flags.append("mutating")
        if child.get("hasSetter") is False and kind == "Var":
            flags.append("get")
        attributes = [a for a in child.get("declAttributes", []) if a not in ("Documentation", "HasStorage", "HasInitialValue")]
        line = ".".join(full) + "  [" + " ".join(flags) + "]" + signature(child)
        if attributes:
            line += "  @" + " @".join(sorted(attributes))
        conformances = sorted(
            c["printedName"] for c in child.get("conformances", []) if c.get("printedName") not in QUIET_CONFORMANCES)
        if conformances:
            line += "  : " + ", ".join(conformances)
        lines.append(line)
        walk(child, full, lines)


def main():
    with open(sys.argv[1], encoding="utf-8") as handle:
        dump = json.load(handle)
    lines = []
    walk(dump["ABIRoot"], [], lines)
    for line in sorted(set(lines)):
        print(line)


if __name__ == "__main__":
    main()
