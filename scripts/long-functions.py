#!/usr/bin/env python3
"""Lists Swift functions longer than a limit and Swift files longer than a limit.

Usage: scripts/long-functions.py [--max-function 60] [--max-file 400] [--all] [PATH ...]
(default PATH: Sources). A function is a func, init, deinit or subscript with a body; its
length counts every line from the declaration's first line to its closing brace. A function
may be longer when a comment right above it (above its attributes and doc comment, or among
them) says `flat table` (a setopt or symbol list, say). Strings, comments and nested
declarations are handled: a nested function is measured on its own and still counts inside
the enclosing one. --all prints the longest function of every file. Exits 1 when anything is
over a limit.
"""

import argparse
import os
import re
import sys

DECLARATION = re.compile(
    r"^\s*(?:@[\w.]+(?:\([^)]*\))?\s+)*"
    r"(?:(?:public|private|fileprivate|internal|package|open|static|class|final|override|"
    r"mutating|nonmutating|nonisolated|required|convenience|dynamic|isolated|consuming|borrowing|"
    r"(?:private|fileprivate|internal|package|public|open)\(set\))\s+)*"
    r"(?P<kind>func\s+(?P<name>[^\s(<]+)|init[?!]?|deinit|subscript)\b"
)

CONTINUATIONS = ("{", "->", "throws", "rethrows", "async", "where", "&", ",")


def code_only(text):
    """The text with comments and string contents blanked out (newlines kept)."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif text.startswith("/*", i):
            depth, j = 1, i + 2
            while j < n and depth:
                if text.startswith("/*", j):
                    depth, j = depth + 1, j + 2
                elif text.startswith("*/", j):
                    depth, j = depth - 1, j + 2
                else:
                    j += 1
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c == '"' or (c == "#" and re.match(r'#+"', text[i:])):
            hashes = len(re.match(r"#*", text[i:]).group(0))
            start = i
            i += hashes
            triple = text.startswith('"""', i)
            quote = '"""' if triple else '"'
            i += len(quote)
            close = quote + "#" * hashes
            escape = "\\" + "#" * hashes
            while i < n:
                if text.startswith(escape + "(", i):
                    # interpolation: skip a balanced parenthesised expression
                    i += len(escape) + 1
                    depth = 1
                    while i < n and depth:
                        if text[i] == "(":
                            depth += 1
                        elif text[i] == ")":
                            depth -= 1
                        i += 1
                elif text.startswith(escape, i):
                    i += len(escape) + 1
                elif text.startswith(close, i):
                    i += len(close)
                    break
                elif not triple and text[i] == "\n":
                    break
                else:
                    i += 1
            out.append(re.sub(r"[^\n]", " ", text[start:i]))
        else:
            out.append(c)
            i += 1
    return "".join(out)


def flat_table_above(lines, index):
    """Whether the comment lines and attributes right above line `index` say `flat table`."""
    j = index - 1
    while j >= 0:
        stripped = lines[j].strip()
        if stripped.startswith("//") or stripped.startswith("@") or stripped.startswith("*") or (
            stripped.startswith("/*")
        ):
            if "flat table" in stripped.lower():
                return True
            j -= 1
        else:
            return False
    return False


def functions(path):
    """(name, first line, length, exempt) for each function with a body in the file."""
    with open(path, encoding="utf-8") as handle:
        text = handle.read()
    lines = text.split("\n")
    code = code_only(text).split("\n")
    found = []
    for index, line in enumerate(code):
        match = DECLARATION.match(line)
        if not match:
            continue
        # Find the body's opening brace: the first `{` at parenthesis depth 0 after the
        # declaration; a protocol requirement (no body) ends at a line without one.
        depth_paren = 0
        opened = None
        row, col = index, match.end()
        while row < len(code) and opened is None:
            segment = code[row]
            while col < len(segment):
                ch = segment[col]
                if ch in "([":
                    depth_paren += 1
                elif ch in ")]":
                    depth_paren -= 1
                elif ch == "{" and depth_paren == 0:
                    opened = (row, col)
                    break
                col += 1
            if opened is None:
                # At depth 0 a signature only goes on with `->`, effects, `where` or the brace;
                # any other line means a declaration without a body (a protocol requirement).
                following = code[row + 1].strip() if row + 1 < len(code) else ""
                if depth_paren == 0 and not following.startswith(CONTINUATIONS):
                    break
                row, col = row + 1, 0
        if opened is None:
            continue
        depth = 0
        row, col = opened
        end = None
        while row < len(code) and end is None:
            segment = code[row]
            while col < len(segment):
                if segment[col] == "{":
                    depth += 1
                elif segment[col] == "}":
                    depth -= 1
                    if depth == 0:
                        end = row
                        break
                col += 1
            row, col = row + 1, 0
        if end is None:
            continue
        name = match.group("name") or match.group("kind").split()[0]
        found.append((name, index + 1, end - index + 1, flat_table_above(lines, index)))
    return found, len(lines) - (1 if text.endswith("\n") else 0)


def swift_files(paths):
    for root in paths:
        if os.path.isfile(root):
            yield root
            continue
        for folder, _, names in os.walk(root):
            for name in sorted(names):
                if name.endswith(".swift"):
                    yield os.path.join(folder, name)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--max-function", type=int, default=60)
    parser.add_argument("--max-file", type=int, default=400)
    parser.add_argument("--all", action="store_true", help="print each file's longest function")
    parser.add_argument("paths", nargs="*", default=["Sources"])
    options = parser.parse_args()
    over = 0
    for path in sorted(swift_files(options.paths)):
        found, line_count = functions(path)
        if line_count > options.max_file:
            print(f"{path}: file has {line_count} lines (over {options.max_file})")
            over += 1
        for name, line, length, exempt in found:
            if length > options.max_function:
                note = " (flat table, allowed)" if exempt else ""
                print(f"{path}:{line}: {name} has {length} lines{note}")
                over += 0 if exempt else 1
        if options.all and found:
            name, line, length, _ = max(found, key=lambda item: item[2])
            print(f"  longest in {path}: {name} at line {line}, {length} lines")
    if over:
        print(f"{over} over the limits", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
