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
#   h264-aac-45s-gop2.mp4        45 s 640x360 15 fps H.264 (a keyframe every 2 s) + AAC, over the 30 s
#                                video limit: trimmed by stream copy (issue 24)
#   h264-40s-one-gop.mp4         40 s 64x48 1 fps H.264 with a single keyframe: no copy cut exists
#   mpeg4-720p-45s.avi           45 s 1280x720 30 fps MPEG-4 part 2 in AVI: a transcode of several
#                                seconds, for the media rescue's deadline test
#
# Deterministic for a given ImageMagick and FFmpeg (fixed noise seed, -strip). Files already present are
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
command -v ffmpeg >/dev/null || { echo "make-large-samples: needs ffmpeg (apt-get install -y ffmpeg)" >&2; exit 1; }
lavfi() { ffmpeg -nostdin -loglevel error -y "$@"; }
gop2() {
  lavfi -f lavfi -i testsrc2=size=640x360:rate=15 -f lavfi -i sine=frequency=440:sample_rate=48000 -t 45 \
    -c:v libx264 -preset ultrafast -g 30 -pix_fmt yuv420p -c:a aac -b:a 64k -movflags +faststart "$1"
}
make h264-aac-45s-gop2.mp4 gop2
onegop() { lavfi -f lavfi -i testsrc2=size=64x48:rate=1 -t 40 -c:v libx264 -preset ultrafast -g 1000 -pix_fmt yuv420p "$1"; }
make h264-40s-one-gop.mp4 onegop
avi720() { lavfi -f lavfi -i testsrc2=size=1280x720:rate=30 -t 45 -c:v mpeg4 -q:v 8 "$1"; }
make mpeg4-720p-45s.avi avi720
