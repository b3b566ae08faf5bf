#!/usr/bin/env bash
# Writes the large rescue samples (issue 15) into DIR; they are generated, not committed, to
# keep the repository small (about 20 MB in all, 10 s of CPU).
#
#   scripts/make-large-samples.sh DIR
#
#   jpeg-24mp.jpg                6000x4000 photo-like JPEG (gradient + noise), quality 85
#   jpeg-24mp-orientation-6.jpg  the same pixels with Exif Orientation 6 (shown 4000x6000)
#   png16-over-limits.png        5000x4000 16-bit RGB PNG: 80 MB decoded, over the 64 MiB ceiling
#   jpeg-12mp-over-10mb.jpg      4000x3000 noisy JPEG of about 12 MB, over the 10 MB image limit
#
# Deterministic for a given ImageMagick (fixed noise seed, -strip). Files already present are
# kept, so tests and benchmarks can share one directory.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
OUT=${1:?usage: make-large-samples.sh DIR}
mkdir -p "$OUT"
command -v convert >/dev/null || { echo "make-large-samples: needs ImageMagick (apt-get install -y imagemagick)" >&2; exit 1; }
GRADIENT=gradient:'#2060c0-#f0a020'
make() { # make NAME COMMAND...: runs COMMAND writing NAME.tmp, then renames (no torn files)
  local name=$1
  shift
  [[ -s "$OUT/$name" ]] && return 0
  "$@" "$OUT/$name.tmp.${name##*.}"
  mv "$OUT/$name.tmp.${name##*.}" "$OUT/$name"
}
make jpeg-24mp.jpg convert -size 6000x4000 "$GRADIENT" -seed 7 -attenuate 0.4 +noise Gaussian -strip -quality 85
orient() { python3 "$ROOT/scripts/make-samples.py" jpeg-orient "$OUT/jpeg-24mp.jpg" "$1" 6; }
make jpeg-24mp-orientation-6.jpg orient
png16() { convert -size 5000x4000 -depth 16 "$GRADIENT" -strip "PNG48:$1"; }
make png16-over-limits.png png16
make jpeg-12mp-over-10mb.jpg convert -size 4000x3000 "$GRADIENT" -seed 7 -attenuate 1.2 +noise Gaussian -strip -quality 90
