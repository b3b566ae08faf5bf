#!/usr/bin/env bash
# The public API of the library products (AttachmentKit, AttachmentKitFoundation), dumped with
# the toolchain's swift-api-digester (-dump-sdk) and rendered one declaration a line
# (scripts/api-text.py) into api/MODULE.txt, which is committed: an API change is then a diff a
# reviewer sees (issue 54, item 3).
#
# Usage: scripts/api-dump.sh           rewrite api/*.txt from the code
#        scripts/api-dump.sh --check   exit 1 (printing the difference) when the code's public
#                                      surface differs from api/*.txt (CI)
# It builds with the test steps' flags (scripts/test.sh), so after them nothing is compiled again.
set -euo pipefail
cd "$(dirname "$0")/.."
check=0
[ "${1:-}" = "--check" ] && check=1
swift build --build-tests -Xswiftc -warnings-as-errors >/dev/null
bin=$(swift build --build-tests -Xswiftc -warnings-as-errors --show-bin-path)
digester="$(dirname "$(readlink -f "$(command -v swift)")")/swift-api-digester"
[ -x "$digester" ] || { echo "api-dump: no swift-api-digester beside swift" >&2; exit 2; }
# The C modules the library imports: each target's include directory (or the target itself,
# which holds a module map), and the module maps SwiftPM generates for the others.
includes=(-I "$bin/Modules")
for target in Sources/C*; do
  if [ -d "$target/include" ]; then includes+=(-I "$target/include"); else includes+=(-I "$target"); fi
done
for generated in "$bin"/C*.build; do includes+=(-I "$generated"); done
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p api
status=0
for module in AttachmentKit AttachmentKitFoundation; do
  "$digester" -dump-sdk -module "$module" "${includes[@]}" -avoid-location -avoid-tool-args \
    -o "$work/$module.json" 2>"$work/$module.err" || {
    cat "$work/$module.err" >&2
    echo "api-dump: swift-api-digester could not load $module" >&2
    exit 2
  }
  python3 scripts/api-text.py "$work/$module.json" >"$work/$module.txt"
  [ -s "$work/$module.txt" ] || { echo "api-dump: $module's dump is empty" >&2; exit 2; }
  if ((check)); then
    if ! diff -u "api/$module.txt" "$work/$module.txt" >"$work/$module.diff"; then
      echo "api-dump: the public API of $module changed without api/$module.txt (run scripts/api-dump.sh and commit it):" >&2
      cat "$work/$module.diff" >&2
      status=1
    fi
  else
    cp "$work/$module.txt" "api/$module.txt"
    echo "api/$module.txt: $(wc -l <"api/$module.txt") public declarations"
  fi
done
exit "$status"
