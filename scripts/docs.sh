#!/usr/bin/env bash
# The documentation, checked as CI checks code (issue 54, item 5):
# 1. every relative link `](path)` of README.md and docs/*.md names a file that exists (a page
#    moved or renamed fails here, naming the page and the link);
# 2. the library's DocC catalog (Sources/AttachmentKit/AttachmentKit.docc: the landing page and
#    its articles) is built with warnings as errors against the library's public symbol graph, so
#    a ``Symbol`` link to a type that is gone, a <doc:Article> link to a missing article or a doc
#    comment DocC cannot read fails the script.
# There is no swift-docc-plugin (no outside package can be fetched), so the symbol graph comes
# from `swift package dump-symbol-graph` (it builds the debug build, then extracts each module's
# public symbols), of which docc reads AttachmentKit's alone. It builds with scripts/test.sh's
# flags (-warnings-as-errors), so that after CI's test steps the build is already up to date: with
# other flags SwiftPM would compile every target again.
# Usage: scripts/docs.sh [OUTPUT] (the archive; default .build/docs/AttachmentKit.doccarchive).
set -euo pipefail
cd "$(dirname "$0")/.."

# 1. Relative links. A link is `](target)`; targets with a scheme (https:, mailto:) and
# in-page anchors (#…) are not files; a target's own anchor is dropped before the check.
broken=0
for page in README.md docs/*.md; do
  while IFS= read -r target; do
    case "$target" in
      *://* | mailto:* | '#'*) continue ;;
    esac
    file=${target%%#*}
    if [ ! -e "$(dirname "$page")/$file" ]; then
      echo "docs: $page links to $target, which does not exist" >&2
      broken=1
    fi
  done < <(grep -o '](\([^)]*\))' "$page" | sed 's/^](\(.*\))$/\1/')
done
[ "$broken" -eq 0 ] || exit 1
echo "docs: every relative link of README.md and docs/*.md resolves" >&2

# 2. DocC.
output=${1:-.build/docs/AttachmentKit.doccarchive}
graphs=$(mktemp -d)
trap 'rm -rf "$graphs"' EXIT
# (its progress on stderr; its last line on stdout names the directory of the graphs)
dump=$(swift package -Xswiftc -warnings-as-errors dump-symbol-graph --minimum-access-level public | tail -1)
dir=$(sed -n 's/^Files written to //p' <<<"$dump")
[ -n "$dir" ] && [ -f "$dir/AttachmentKit.symbols.json" ] || {
  echo "docs: swift package dump-symbol-graph wrote no AttachmentKit.symbols.json ($dump)" >&2
  exit 1
}
# AttachmentKit's graph and its extensions of other modules' types (AttachmentKit@Swift…)
cp "$dir"/AttachmentKit.symbols.json "$graphs"/
# (none when the library extends no other module's type; a copy that fails still fails)
for extension in "$dir"/AttachmentKit@*.symbols.json; do
  [ ! -e "$extension" ] || cp "$extension" "$graphs"/
done
rm -rf "$output"
mkdir -p "$(dirname "$output")"
docc convert Sources/AttachmentKit/AttachmentKit.docc \
  --additional-symbol-graph-dir "$graphs" \
  --fallback-display-name AttachmentKit \
  --fallback-bundle-identifier org.attachmentkit.AttachmentKit \
  --warnings-as-errors \
  --output-path "$output"
echo "docs: the DocC catalog built with warnings as errors into $output" >&2
