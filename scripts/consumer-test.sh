#!/usr/bin/env bash
# The README's library section, built as a user builds it: a package of its own that depends on
# this one by path (through a directory named AttachmentKit, as the README says to clone it),
# with the README's Package.swift lines and its Foundation URL example as main.swift, run against
# the samples served on loopback. Then every other `swift` block of the README and of docs/ (and
# of the DocC catalog's articles, Sources/AttachmentKit/AttachmentKit.docc), each in turn as the
# package's main.swift, built and run: a block that no longer compiles, or exits non-zero, fails
# the script (issue 53: "every code block compiles and runs in CI"). A block that repeats the
# README's manifest lines or its Foundation example (Getting started does) must be the README's
# text, and is not run again. A block that is an illustration rather than a program is fenced
# other than ```swift (```text, ```sh), and is not read. About 2 min on two cores (it compiles the library once, in a scratch
# path of its own under $TMPDIR; each further block only its own main.swift).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
work=$(mktemp -d)
server=""
cleanup() {
  [ -z "$server" ] || kill "$server" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

# block MARKER: the body of the README's first swift block that contains MARKER.
block() {
  awk -v marker="$1" '
    /^```swift$/ { inside = 1; body = ""; next }
    /^```$/ && inside { if (index(body, marker)) { printf "%s", body; exit } inside = 0; next }
    inside { body = body $0 "\n" }' README.md
}

ln -s "$root" "$work/AttachmentKit"
mkdir -p "$work/Fetcher/Sources/Fetcher"
manifest=$(block '.package(path: "../AttachmentKit")')
example=$(block 'import AttachmentKitFoundation')
[ -n "$manifest" ] && [ -n "$example" ] || { echo "consumer-test: the README's blocks are missing" >&2; exit 1; }
{
  echo '// swift-tools-version:6.0'
  echo 'import PackageDescription'
  echo 'let package = Package('
  echo '  name: "Fetcher",'
  # the README's lines, without their comment line
  grep -v '^//' <<<"$manifest"
  echo ')'
} >"$work/Fetcher/Package.swift"

# The samples on loopback, on a port the kernel picks.
python3 -m http.server 0 --bind 127.0.0.1 --directory Samples >"$work/server.log" 2>&1 &
server=$!
port=""
for _ in $(seq 1 100); do
  port=$(sed -n 's/.*port \([0-9]*\).*/\1/p' "$work/server.log" | head -1)
  [ -n "$port" ] && break
  sleep 0.1
done
[ -n "$port" ] || { echo "consumer-test: the sample server did not start" >&2; exit 1; }
sed "s#http://127.0.0.1:8000/#http://127.0.0.1:$port/#" <<<"$example" >"$work/Fetcher/Sources/Fetcher/main.swift"
grep -q "127.0.0.1:$port" "$work/Fetcher/Sources/Fetcher/main.swift" || {
  echo "consumer-test: the README's example names no http://127.0.0.1:8000/ URL" >&2
  exit 1
}

echo "consumer-test: building the README's consumer package against $root by path" >&2
swift build --package-path "$work/Fetcher" --scratch-path "$work/build" >&2
output=$(XDG_CACHE_HOME="$work/cache" "$(swift build --package-path "$work/Fetcher" --scratch-path "$work/build" --show-bin-path)/Fetcher")
echo "$output"
read -r uti path <<<"$output"
[ "$uti" = "public.jpeg" ] || { echo "consumer-test: expected public.jpeg, got '$output'" >&2; exit 1; }
cmp "$path" Samples/media/jpeg-baseline.jpg || { echo "consumer-test: the file is not the sample's bytes" >&2; exit 1; }
echo "consumer-test: attachment(for: URL) answered $uti" >&2

# Every other swift block: each a whole program, run against the same loopback samples.
# blocks FILE: each swift block of FILE, NUL-terminated.
blocks() {
  awk '
    /^```swift$/ { inside = 1; body = ""; next }
    /^```$/ && inside { printf "%s%c", body, 0; inside = 0; next }
    inside { body = body $0 "\n" }' "$1"
}
count=0
while IFS= read -r -d '' file; do
  while IFS= read -r -d '' body; do
    # The manifest lines and the Foundation example ran above; a page that shows them again
    # (the DocC catalog's Getting started) must show the README's text, or it is not what ran.
    for copy in '^// Package.swift' '^import AttachmentKitFoundation'; do
      grep -q "$copy" <<<"$body" || continue
      if [ "$(printf '%s' "$body")" != "$manifest" ] && [ "$(printf '%s' "$body")" != "$example" ]; then
        echo "consumer-test: a swift block of $file is not the README's block it repeats ($copy)" >&2
        exit 1
      fi
      continue 2
    done
    count=$((count + 1))
    sed "s#http://127.0.0.1:8000/#http://127.0.0.1:$port/#g" <<<"$body" >"$work/Fetcher/Sources/Fetcher/main.swift"
    echo "consumer-test: building and running swift block $count of $file" >&2
    swift build --package-path "$work/Fetcher" --scratch-path "$work/build" >&2 || {
      echo "consumer-test: swift block $count of $file does not compile:" >&2
      cat "$work/Fetcher/Sources/Fetcher/main.swift" >&2
      exit 1
    }
    XDG_CACHE_HOME="$work/cache" "$(swift build --package-path "$work/Fetcher" --scratch-path "$work/build" --show-bin-path)/Fetcher" >&2 || {
      echo "consumer-test: swift block $count of $file exits non-zero" >&2
      exit 1
    }
  done < <(blocks "$file")
done < <(find README.md docs Sources -name '*.md' -not -path '*/.build/*' -print0 | sort -z)
[ "$count" -ge 2 ] || { echo "consumer-test: expected the README's other swift blocks, found $count" >&2; exit 1; }
echo "consumer-test: passed (attachment(for: URL) answered $uti; $count more swift blocks built and ran)" >&2
