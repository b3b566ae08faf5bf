#!/usr/bin/env bash
# Regenerates the sample media in Samples/media/ and its manifest.tsv.
#
#   scripts/make-samples.sh            # from the repo root (or anywhere)
#
# Wipes every file in Samples/media/ except README.md, then writes each sample
# again. Output is deterministic for a given set of tool versions (Debian 12:
# ffmpeg 5.1, ImageMagick 6.9.11, libx264 164, libmagic 5.44): fixed seeds,
# ffmpeg bitexact flags and no metadata, ImageMagick -strip.
# At the end every refused sample's libmagic answer is compared with the MIME
# recorded in manifest.tsv (a difference is reported, not fatal).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
OUT="${SAMPLES_OUT:-$ROOT/Samples/media}"  # SAMPLES_OUT: write elsewhere (to compare)
PY="$ROOT/scripts/make-samples.py"

# ---------------------------------------------------------------- tools
missing=()
need() { # need COMMAND DEBIAN-PACKAGE
  command -v "$1" >/dev/null 2>&1 || missing+=("$1 (apt-get install -y $2)")
}
need ffmpeg ffmpeg
need ffprobe ffmpeg
need convert imagemagick
need python3 python3
need file file
need cwebp webp
need img2webp webp
need vips libvips-tools
if ((${#missing[@]})); then
  printf 'make-samples: missing tool: %s\n' "${missing[@]}" >&2
  exit 1
fi
for enc in libx264 libmp3lame aac alac mpeg1video mpeg2video mp2 libvpx-vp9 libopus flac mpeg4 \
  libx265 libaom-av1 ac3 eac3 dca truehd pcm_s24le adpcm_ms; do
  # an unknown encoder makes ffmpeg fail: then the help is empty and the check below says so
  help=$(ffmpeg -hide_banner -h encoder="$enc" 2>/dev/null) || help=""
  [[ "$help" == "Encoder $enc "* ]] || {
    echo "make-samples: ffmpeg lacks the $enc encoder (Debian's ffmpeg package has it)" >&2
    exit 1
  }
done
formats=$(convert -list format 2>/dev/null) || formats=""  # checked format by format below
for fmt in HEIC AVIF WEBP TIFF; do
  grep -qE "^ *$fmt\*? +[A-Z0-9]+ +rw" <<<"$formats" || {
    echo "make-samples: ImageMagick cannot write $fmt (apt-get install -y imagemagick libheif1 libwebp7)" >&2
    exit 1
  }
done

TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

mkdir -p "$OUT"
find "$OUT" -mindepth 1 -maxdepth 1 ! -name README.md -exec rm -rf {} +

MANIFEST="$OUT/manifest.tsv"
printf 'file\texpect\ttype\tnotes\n' >"$MANIFEST"
row() { # row FILE EXPECT TYPE NOTES
  [[ -f "$OUT/$1" ]] || { echo "make-samples: $1 was not produced" >&2; exit 1; }
  printf '%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "$4" >>"$MANIFEST"
}
py() { python3 "$PY" "$@"; }

# ffmpeg: quiet, deterministic, no metadata (no encoder tag, zero creation times)
ff() { ffmpeg -nostdin -hide_banner -loglevel error -y "$@"; }
BX=(-fflags +bitexact -flags +bitexact -map_metadata -1 -threads 1)
X264=(-c:v libx264 -preset veryfast -crf 35 -pix_fmt yuv420p -g 15 -threads 1)
VID2=(-f lavfi -i "testsrc=size=160x120:rate=15:duration=2")
VID2_25=(-f lavfi -i "testsrc=size=160x120:rate=25:duration=2")
VID1=(-f lavfi -i "testsrc=size=160x120:rate=15:duration=1")
TONE() { echo "sine=frequency=440:duration=${2:-1}:sample_rate=$1"; }

# ImageMagick: no dates, no profiles
IM() { convert "$@"; }
STRIP=(-strip +set date:create +set date:modify)

cd "$TMP"

# ================================================================ images
IM -size 64x48 gradient:'#2060c0-#f0a020' -fill '#ffffff' -draw 'circle 32,24 32,10' \
  "${STRIP[@]}" PNG24:src.png
IM -size 64x48 xc:none -fill '#2060c0c0' -draw 'circle 32,24 32,4' \
  -fill '#f0a02080' -draw 'rectangle 4,4 28,20' "${STRIP[@]}" PNG32:src-alpha.png

IM src.png "${STRIP[@]}" -quality 80 -interlace none "$OUT/jpeg-baseline.jpg"
row jpeg-baseline.jpg accepted jpeg "64x48, baseline, JFIF APP0"
IM src.png "${STRIP[@]}" -quality 80 -interlace JPEG "$OUT/jpeg-progressive.jpg"
row jpeg-progressive.jpg accepted jpeg "64x48, progressive (SOF2), JFIF APP0"
py jpeg-exif "$OUT/jpeg-baseline.jpg" "$OUT/jpeg-exif.jpg"
row jpeg-exif.jpg accepted jpeg "64x48, Exif APP1 only (no JFIF), big-endian IFD0"
py jpeg-noapp "$OUT/jpeg-baseline.jpg" "$OUT/jpeg-no-app-segment.jpg"
row jpeg-no-app-segment.jpg accepted jpeg "64x48, no APPn segment: SOI then DQT"

IM src-alpha.png "${STRIP[@]}" PNG32:"$OUT/png-rgba.png"
row png-rgba.png accepted png "64x48, 8-bit RGBA (colour type 6)"
IM src.png "${STRIP[@]}" -colors 16 PNG8:"$OUT/png-palette.png"
row png-palette.png accepted png "64x48, palette (colour type 3), 16 colours"
IM src.png "${STRIP[@]}" -colorspace Gray -define png:color-type=0 -define png:bit-depth=8 \
  PNG:"$OUT/png-gray.png"
row png-gray.png accepted png "64x48, 8-bit grayscale (colour type 0)"

IM src.png "${STRIP[@]}" -colors 32 "$OUT/gif-static.gif"
row gif-static.gif accepted gif "64x48, GIF89a, 1 frame"
frames=()
for i in 0 1 2 3 4; do
  IM src.png -fill '#202020' -draw "rectangle $((i * 12)),0 $((i * 12 + 11)),47" \
    "${STRIP[@]}" "frame$i.png"
  frames+=("frame$i.png")
done
IM -delay 20 -loop 0 "${frames[@]}" "${STRIP[@]}" -colors 32 "$OUT/gif-animated.gif"
row gif-animated.gif accepted gif "64x48, GIF89a, 5 frames, 0.2 s each, loops"

IM src.png "${STRIP[@]}" -type TrueColor -compress lzw -define tiff:endian=lsb "$OUT/tiff-little-endian.tiff"
row tiff-little-endian.tiff accepted tiff "64x48, II*, RGB, LZW"
IM src.png "${STRIP[@]}" -type TrueColor -compress lzw -define tiff:endian=msb "$OUT/tiff-big-endian.tiff"
row tiff-big-endian.tiff accepted tiff "64x48, MM*, RGB, LZW"

# ================================================================ MP4 / QuickTime
ff "${VID2[@]}" "${X264[@]}" "${BX[@]}" -f mp4 "$OUT/mp4-isom.mp4"
row mp4-isom.mp4 accepted mp4 "160x120, 2.0 s, 15 fps, 30 frames, H.264, ftyp isom (isom iso2 avc1 mp41)"
ff "${VID2[@]}" "${X264[@]}" "${BX[@]}" -f mp4 -brand mp42 "$OUT/mp4-mp42.mp4"
row mp4-mp42.mp4 accepted mp4 "160x120, 2.0 s, 15 fps, 30 frames, H.264, ftyp mp42 (mp42 iso2 avc1 mp41)"
ff "${VID2[@]}" "${X264[@]}" "${BX[@]}" -f mp4 -brand mp41 "$OUT/mp4-mp41.mp4"
row mp4-mp41.mp4 accepted mp4 "160x120, 2.0 s, 15 fps, 30 frames, H.264, ftyp mp41 (mp41 iso2 avc1 mp41)"
ff "${VID2[@]}" "${X264[@]}" "${BX[@]}" -f mp4 -brand avc1 "$OUT/mp4-avc1.mp4"
row mp4-avc1.mp4 accepted mp4 "160x120, 2.0 s, 15 fps, 30 frames, H.264, ftyp avc1 (avc1 iso2 avc1 mp41)"
ff "${VID2[@]}" "${X264[@]}" "${BX[@]}" -f mp4 \
  -movflags frag_keyframe+empty_moov+default_base_moof "$OUT/mp4-fragmented.mp4"
row mp4-fragmented.mp4 accepted mp4 "160x120, 2.0 s, 15 fps, 30 frames, H.264, fragmented: empty moov then 2 moof+mdat and mfra, ftyp iso5 (iso5 iso6 mp41); mvhd duration 0, no mehd"
py ftyp-brands "$OUT/mp4-isom.mp4" "$OUT/mp4-brand-msnv.mp4" MSNV
row mp4-brand-msnv.mp4 accepted mp4 "160x120, 2.0 s, 15 fps, 30 frames, H.264, ftyp MSNV (isom iso2 avc1 mp41) (libmagic: audio/mp4)"
py ftyp-brands "$OUT/mp4-isom.mp4" "$OUT/mp4-brand-xavc.mp4" XAVC --compat XAVC
row mp4-brand-xavc.mp4 accepted mp4 "160x120, 2.0 s, 15 fps, 30 frames, H.264, ftyp XAVC (XAVC x4), no known brand (libmagic: application/octet-stream)"
ff "${VID2[@]}" -f lavfi -i "$(TONE 22050 2)" "${X264[@]}" -c:a aac -b:a 32k -ac 1 \
  "${BX[@]}" -f mp4 "$OUT/mp4-video-audio.mp4"
row mp4-video-audio.mp4 accepted mp4 "160x120, 2.0 s, 15 fps, 30 frames, H.264 + AAC-LC 22.05 kHz mono, ftyp isom"

ff "${VID2[@]}" "${X264[@]}" "${BX[@]}" -f mov "$OUT/mov-qt.mov"
row mov-qt.mov accepted mov "160x120, 2.0 s, 15 fps, 30 frames, H.264, ftyp qt, layout ftyp wide mdat moov"
ff "${VID2[@]}" "${X264[@]}" "${BX[@]}" -f mov -movflags +faststart mov-faststart.mov
py moov-first mov-faststart.mov "$OUT/mov-moov-first.mov"
row mov-moov-first.mov accepted mov "160x120, 2.0 s, 15 fps, 30 frames, H.264, no ftyp: moov free(20) wide mdat"
py ftyp-to-wide "$OUT/mov-qt.mov" "$OUT/mov-wide-first.mov"
row mov-wide-first.mov accepted mov "160x120, 2.0 s, 15 fps, 30 frames, H.264, no ftyp: wide(8) free(12) wide mdat moov (libmagic: application/octet-stream)"

# ================================================================ MPEG
ff "${VID2_25[@]}" -f lavfi -i "$(TONE 44100 2)" -c:v mpeg1video -b:v 64k -g 12 \
  -c:a mp2 -b:a 32k -ac 1 "${BX[@]}" -f mpeg "$OUT/mpeg1-ps.mpg"
row mpeg1-ps.mpg accepted mpeg "160x120, 2.0 s, 25 fps, 50 frames, MPEG-1 system stream, MPEG-1 video + MP2"
ff "${VID2_25[@]}" -f lavfi -i "$(TONE 48000 2)" -c:v mpeg2video -b:v 64k -g 12 \
  -c:a mp2 -b:a 64k -ac 1 "${BX[@]}" -f vob "$OUT/mpeg2-ps.mpg"
row mpeg2-ps.mpg accepted mpeg "160x120, 2.0 s, 25 fps, 50 frames, MPEG-2 program stream (VOB), MPEG-2 video + MP2"
ff "${VID2_25[@]}" -c:v mpeg2video -b:v 64k -g 12 "${BX[@]}" -f mpeg2video "$OUT/mpeg2-video-es.m2v"
row mpeg2-video-es.m2v accepted mpeg "160x120, 2.0 s, 25 fps, 50 frames, MPEG-2 video elementary stream (no container, no time stamps)"
ff "${VID2_25[@]}" -c:v mpeg1video -b:v 64k -g 12 "${BX[@]}" -f mpeg1video mpeg1-es.m1v
py mpeg-rate mpeg1-es.m1v "$OUT/mpeg1-reserved-rate.m1v" 9
row mpeg1-reserved-rate.m1v unsupported_type video/mpeg "160x120, 2.0 s, MPEG-1 video elementary stream whose frame rate code is 9 (reserved; ffmpeg reads it as 15 fps, after Xing): not valid MPEG, transcoded with rescue on"

# ================================================================ audio
IM -seed 5 -size 240x180 xc:gray50 +noise Gaussian "${STRIP[@]}" -quality 95 cover.jpg
ff -f lavfi -i "$(TONE 44100)" -i cover.jpg -map 0:a -map 1:v -c:a libmp3lame -b:a 32k -ac 1 \
  -c:v copy -disposition:v attached_pic "${BX[@]}" -id3v2_version 3 -write_xing 0 \
  -metadata title="AttachmentKit sample" -metadata artist="make-samples" \
  -metadata:s:v title="Album cover" -metadata:s:v comment="Cover (front)" \
  -f mp3 "$OUT/mp3-id3v2-cover.mp3"
tagsize=$(python3 -c '
import sys
h = open(sys.argv[1], "rb").read(10)
assert h[:3] == b"ID3", h
print(10 + (h[6] << 21 | h[7] << 14 | h[8] << 7 | h[9]))' "$OUT/mp3-id3v2-cover.mp3")
((tagsize > 16384)) || { echo "make-samples: ID3v2 tag only $tagsize bytes" >&2; exit 1; }
row mp3-id3v2-cover.mp3 accepted mp3 "1.0 s, 44.1 kHz mono CBR 32k, ID3v2.3 tag of $tagsize bytes with APIC cover 240x180 JPEG"
ff -f lavfi -i "$(TONE 44100)" -c:a libmp3lame -b:a 32k -ac 1 "${BX[@]}" \
  -id3v2_version 0 -write_xing 0 -f mp3 "$OUT/mp3-no-tag.mp3"
row mp3-no-tag.mp3 accepted mp3 "1.0 s, 44.1 kHz mono CBR 32k, no tag, no Xing: starts with FF FB"
# ffmpeg 5.1 ignores -write_id3v1 when -id3v2_version is 0: append the tag ourselves.
py id3v1 "$OUT/mp3-no-tag.mp3" "$OUT/mp3-id3v1.mp3" "AttachmentKit sample"
row mp3-id3v1.mp3 accepted mp3 "1.0 s, 44.1 kHz mono CBR 32k, ID3v1.1 (TAG, last 128 bytes) only"
ff -f lavfi -i "$(TONE 22050)" -c:a libmp3lame -b:a 32k -ac 1 "${BX[@]}" \
  -id3v2_version 0 -write_xing 0 -f mp3 "$OUT/mp3-mpeg2-22khz.mp3"
row mp3-mpeg2-22khz.mp3 accepted mp3 "1.0 s, MPEG-2 layer III 22.05 kHz mono 32k, no tag: starts with FF F3"
ff -f lavfi -i "$(TONE 44100)" -c:a libmp3lame -q:a 6 -ac 1 "${BX[@]}" \
  -id3v2_version 0 -write_xing 1 -f mp3 "$OUT/mp3-xing-vbr.mp3"
row mp3-xing-vbr.mp3 accepted mp3 "1.0 s, 44.1 kHz mono VBR (-q:a 6), Xing header in the first frame, no tag"

ff -f lavfi -i "$(TONE 22050)" -c:a aac -b:a 32k -ac 1 "${BX[@]}" -f adts "$OUT/aac-adts.aac"
row aac-adts.aac accepted aac "1.0 s, AAC-LC ADTS, 22.05 kHz mono 32k"
ff -f lavfi -i "$(TONE 22050)" -c:a aac -b:a 32k -ac 1 "${BX[@]}" -f ipod "$OUT/aac-m4a.m4a"
row aac-m4a.m4a accepted aac "1.0 s, AAC-LC in MPEG-4, ftyp M4A, 22.05 kHz mono"
ff -f lavfi -i "$(TONE 22050)" -c:a aac -b:a 32k -ac 1 "${BX[@]}" -f mp4 "$OUT/aac-isom-audio-only.mp4"
row aac-isom-audio-only.mp4 accepted aac "1.0 s, AAC-LC in MPEG-4, ftyp isom, audio track only (libmagic: video/mp4)"

ff -f lavfi -i "$(TONE 8000)" -c:a pcm_s16le -ac 1 "${BX[@]}" -f wav "$OUT/wav-pcm16.wav"
row wav-pcm16.wav accepted wav "1.0 s, PCM s16le, 8 kHz mono, RIFF/WAVE"
ff -f lavfi -i "$(TONE 8000)" -c:a pcm_s16le -ac 1 "${BX[@]}" -f caf "$OUT/caf-pcm.caf"
row caf-pcm.caf accepted caf "1.0 s, LPCM s16le, 8 kHz mono (libmagic: application/octet-stream)"
ff -f lavfi -i "$(TONE 22050)" -c:a alac -ac 1 "${BX[@]}" -f caf "$OUT/caf-alac.caf"
row caf-alac.caf accepted caf "1.0 s, ALAC, 22.05 kHz mono (libmagic: application/octet-stream)"

# ================================================================ near misses (refused)
IM src.png "${STRIP[@]}" -quality 60 "$OUT/webp-lossy.webp"
row webp-lossy.webp unsupported_type image/webp "64x48, WebP VP8 lossy"
IM src.png "${STRIP[@]}" heic:"$OUT/heic-still.heic"
row heic-still.heic unsupported_type image/heic "64x48, HEIF ftyp heic (mif1 heic miaf), HEVC (libheif)"
IM src.png "${STRIP[@]}" avif:"$OUT/avif-still.avif"
row avif-still.avif unsupported_type image/avif "64x48, ftyp avif (avif mif1 miaf), AV1 (libheif)"
ff -f lavfi -i "testsrc=size=64x48:rate=10:duration=0.5" -c:v libaom-av1 -cpu-used 8 -row-mt 0 "${BX[@]}" \
  -f avif "$OUT/avif-sequence.avif"
row avif-sequence.avif unsupported_type image/avif "64x48, 5 frames at 10 fps, an AVIF image sequence (avis brand: libheif 1.15 does not read it, FFmpeg's mov demuxer does)"
# HEIF and HEIC image sequences: HEVC in a 'pict' track under the msf1 / hevc brands (what
# libheif 1.15 does not read and FFmpeg's mov demuxer does); FFmpeg writes the track as video.
ff -f lavfi -i "testsrc=size=64x48:rate=10:duration=0.5" -c:v libx265 -x265-params log-level=error:pools=1:frame-threads=1 \
  -tag:v hvc1 "${BX[@]}" -brand msf1 -f mp4 hevc-seq.mp4
py hdlr-pict hevc-seq.mp4 "$OUT/heif-sequence.heifs"
row heif-sequence.heifs unsupported_type image/heif-sequence "64x48, 5 frames at 10 fps, an HEIF image sequence (msf1 brand, pict track, HEVC)"
py ftyp-brands "$OUT/heif-sequence.heifs" "$OUT/heic-sequence.heics" hevc
row heic-sequence.heics unsupported_type image/heic-sequence "64x48, 5 frames at 10 fps, an HEIC image sequence (hevc brand, pict track, HEVC)"
IM src.png "${STRIP[@]}" jp2:"$OUT/jpeg2000.jp2"
row jpeg2000.jp2 unsupported_type image/jp2 "64x48, JPEG 2000 (jp2 brand), OpenJPEG"
VIPS_CONCURRENCY=1 vips copy src.png "$OUT/jpegxl.jxl"
row jpegxl.jxl unsupported_type image/jxl "64x48, JPEG XL codestream (libjxl, written by libvips)"
IM src.png "${STRIP[@]}" j2k:"$OUT/jpeg2000-codestream.j2k"
row jpeg2000-codestream.j2k unsupported_type image/x-jp2-codestream "64x48, a bare JPEG 2000 codestream (no JP2 boxes), OpenJPEG"
VIPS_CONCURRENCY=1 vips copy src.png "$OUT/bigtiff.tif[bigtiff]"
row bigtiff.tif unsupported_type image/tiff "64x48, BigTIFF (version 43, 64-bit offsets): not a classic TIFF, converted with rescue on"
# Rescue near-misses (issue 15): converted with rescue on, refused without.
IM src.png "${STRIP[@]}" -alpha set -channel A -evaluate set 50% +channel PNG32:alpha.png
cwebp -quiet -lossless -metadata none alpha.png -o "$OUT/webp-alpha.webp"
row webp-alpha.webp unsupported_type image/webp "64x48, WebP VP8L lossless with alpha (50 %)"
IM -size 64x48 xc:'#c02020' "${STRIP[@]}" PNG24:red.png
IM -size 64x48 xc:'#2020c0' "${STRIP[@]}" PNG24:blue.png
img2webp -loop 0 -lossless -d 100 red.png -d 250 blue.png -o "$OUT/webp-animated.webp" >/dev/null 2>&1
row webp-animated.webp unsupported_type image/webp "64x48, animated WebP, 2 frames (100 ms, 250 ms), loops"
IM src.png "${STRIP[@]}" BMP3:"$OUT/bmp-24bit.bmp"
row bmp-24bit.bmp unsupported_type image/bmp "64x48, BMP 3 (Windows), 24-bit (libvips reads BMP only through ImageMagick; with rescue on, FFmpeg's BMP decoder converts it)"
cat >"$OUT/svg-image.svg" <<'EOF'
<?xml version="1.0" encoding="UTF-8"?>
<svg xmlns="http://www.w3.org/2000/svg" width="64" height="48" viewBox="0 0 64 48">
  <rect width="64" height="48" fill="#2060c0"/>
  <circle cx="32" cy="24" r="14" fill="#ffffff"/>
</svg>
EOF
row svg-image.svg unsupported_type image/svg+xml "64x48 vector image with XML declaration"
cat >"$OUT/html-error-page.html" <<'EOF'
<!DOCTYPE html>
<html lang="en">
<head><meta charset="utf-8"><title>404 Not Found</title></head>
<body>
<h1>Not Found</h1>
<p>The requested URL /media/image.jpg was not found on this server.</p>
</body>
</html>
EOF
row html-error-page.html unsupported_type text/html "a 404 page as a server returns it for image.jpg"
cat >"$OUT/json-error.json" <<'EOF'
{
  "error": {
    "code": 403,
    "message": "Signature expired: the attachment URL is no longer valid"
  }
}
EOF
row json-error.json unsupported_type application/json "an API error body"
py pdf "$OUT/pdf-document.pdf"
row pdf-document.pdf unsupported_type application/pdf "PDF 1.4, 1 page"
py zip "$OUT/zip-archive.zip"
row zip-archive.zip unsupported_type application/zip "1 stored text file"
ff "${VID1[@]}" "${X264[@]}" "${BX[@]}" -f matroska "$OUT/matroska.mkv"
row matroska.mkv unsupported_type video/x-matroska "160x120, 1.0 s, H.264 in Matroska"
ff "${VID1[@]}" -c:v libvpx-vp9 -b:v 40k -deadline good -cpu-used 8 -row-mt 0 -g 15 \
  "${BX[@]}" -f webm "$OUT/webm-vp9.webm"
row webm-vp9.webm unsupported_type video/webm "160x120, 1.0 s, VP9 in WebM"
ff -f lavfi -i "$(TONE 48000)" -c:a libopus -b:a 16k -ac 1 "${BX[@]}" -f opus "$OUT/ogg-opus.opus"
row ogg-opus.opus unsupported_type audio/ogg "1.0 s, Opus in Ogg, 48 kHz mono 16k"
ff -f lavfi -i "$(TONE 8000)" -c:a flac -ac 1 "${BX[@]}" -f flac "$OUT/flac-audio.flac"
row flac-audio.flac unsupported_type audio/flac "1.0 s, FLAC, 8 kHz mono"
ff -f lavfi -i "$(TONE 8000)" -c:a pcm_s16be -ac 1 "${BX[@]}" -f aiff "$OUT/aiff-pcm.aiff"
row aiff-pcm.aiff accepted aiff "1.0 s, AIFF PCM s16be, 8 kHz mono, codecs lpcm"
for aifc in "sowt pcm_s16le" "fl32 pcm_f32be" "fl64 pcm_f64be" "ulaw pcm_mulaw" "alaw pcm_alaw" "ima4 adpcm_ima_qt"; do
  read -r name encoder <<<"$aifc"
  ff -f lavfi -i "$(TONE 8000)" -c:a "$encoder" -ac 1 "${BX[@]}" -f aiff "$OUT/aifc-$name.aifc"
  codec=lpcm
  [[ $name == ulaw || $name == alaw || $name == ima4 ]] && codec=$name
  row "aifc-$name.aifc" accepted aiff "1.0 s, AIFF-C '$name' ($encoder), 8 kHz mono, codecs $codec"
done
ff "${VID1[@]}" -c:v mpeg4 -q:v 10 -g 15 "${BX[@]}" -f avi "$OUT/avi-mpeg4.avi"
row avi-mpeg4.avi unsupported_type video/x-msvideo "160x120, 1.0 s, MPEG-4 part 2 in AVI (in Apple's list, not in the product's)"
ff "${VID1[@]}" "${X264[@]}" "${BX[@]}" -f mpegts "$OUT/mpegts-sdt-first.ts"
row mpegts-sdt-first.ts unsupported_type video/MP2T "160x120, 1.0 s, H.264 in MPEG-TS as ffmpeg writes it: SDT packet first (named by its packets; libmagic: application/octet-stream)"
py ts-drop-sdt "$OUT/mpegts-sdt-first.ts" "$OUT/mpegts-pat-first.ts"
row mpegts-pat-first.ts unsupported_type video/MP2T "same stream without the SDT: PAT packet first"
ff "${VID1[@]}" -f lavfi -i "$(TONE 48000)" "${X264[@]}" -c:a aac -b:a 32k -ac 1 "${BX[@]}" -f mpegts \
  "$OUT/mpegts-h264-aac.ts"
row mpegts-h264-aac.ts unsupported_type video/MP2T "160x120, 1.0 s, H.264 + AAC in MPEG-TS as ffmpeg writes it, SDT first (libmagic: application/octet-stream)"
ff "${VID1[@]}" -f lavfi -i "$(TONE 48000)" "${X264[@]}" -c:a ac3 -b:a 64k -ac 1 "${BX[@]}" -f mpegts \
  -mpegts_m2ts_mode 1 "$OUT/m2ts-h264-ac3.mts"
row m2ts-h264-ac3.mts unsupported_type video/MP2T "160x120, 1.0 s, H.264 + AC-3 in M2TS as an AVCHD camera writes it: 192-byte packets (a 4-byte time code before each; libmagic: application/octet-stream)"
py ts-204 "$OUT/mpegts-sdt-first.ts" "$OUT/mpegts-204.ts"
row mpegts-204.ts unsupported_type video/MP2T "mpegts-sdt-first.ts in 204-byte packets (16 bytes of DVB parity after each; libmagic: application/octet-stream)"
# Formats phones, cameras and old sites sent (issue 42): refused, and rescued by FFmpeg's decoders
VQCIF=(-f lavfi -i "testsrc=size=128x96:rate=15:duration=1")
ff "${VQCIF[@]}" -f lavfi -i "$(TONE 8000)" -c:v h263 -b:v 48k -g 15 -c:a aac -b:a 16k -ac 1 "${BX[@]}" \
  -f 3gp "$OUT/3gp-h263-aac.3gp"
row 3gp-h263-aac.3gp unsupported_type video/3gpp "128x96, 1.0 s, H.263 + AAC in 3GPP (ISO brand 3gp4)"
ff "${VID1[@]}" -f lavfi -i "$(TONE 22050)" -c:v flv -b:v 48k -g 15 -c:a adpcm_swf -ac 1 "${BX[@]}" \
  -f flv "$OUT/flv-sorenson.flv"
row flv-sorenson.flv unsupported_type video/x-flv "160x120, 1.0 s, Sorenson H.263 + Flash ADPCM in FLV"
ff "${VID1[@]}" -f lavfi -i "$(TONE 22050)" -c:v wmv2 -b:v 48k -g 15 -c:a wmav2 -b:a 32k -ac 1 "${BX[@]}" \
  -f asf "$OUT/asf-wmv2.wmv"
row asf-wmv2.wmv unsupported_type video/x-ms-asf "160x120, 1.0 s, WMV 8 + WMA 2 in ASF"
ff "${VID1[@]}" -f lavfi -i "$(TONE 22050)" -c:v msmpeg4v2 -b:v 48k -g 15 -c:a adpcm_ms -ac 1 "${BX[@]}" \
  -f avi "$OUT/avi-msmpeg4v2.avi"
row avi-msmpeg4v2.avi unsupported_type video/x-msvideo "160x120, 1.0 s, Microsoft MPEG-4 v2 + MS ADPCM in AVI"
ff -f lavfi -i "$(TONE 16000)" -c:a libspeex -ac 1 "${BX[@]}" -f ogg "$OUT/ogg-speex.spx"
row ogg-speex.spx unsupported_type audio/ogg "1.0 s, Speex in Ogg, 16 kHz mono"
ff -f lavfi -i "$(TONE 48000)" -c:a ac3 -b:a 64k -ac 1 "${BX[@]}" -f ac3 "$OUT/ac3-raw.ac3"
row ac3-raw.ac3 unsupported_type audio/vnd.dolby.dd-raw "1.0 s, raw AC-3, 48 kHz mono 64k"
py amr "$OUT/amr-nb.amr" 20261204 50
row amr-nb.amr unsupported_type audio/amr "1.0 s, raw AMR-NB 12.2 kb/s, 50 frames of pseudo-random speech bits"
# AMR inside 3GPP: Debian's ffmpeg has no AMR encoder, so the raw AMR above is copied in
ff "${VQCIF[@]}" -i "$OUT/amr-nb.amr" -c:v h263 -b:v 48k -g 15 -c:a copy "${BX[@]}" -f 3gp "$OUT/3gp-h263-amr.3gp"
row 3gp-h263-amr.3gp unsupported_type video/3gpp "128x96, 1.0 s, H.263 + AMR-NB (amr-nb.amr copied) in 3GPP, as feature phones sent"
printf 'GIF89a is the version of the Graphics Interchange Format that added animation.\nThis is plain text, not an image.\n' \
  >"$OUT/text-starting-gif89a.txt"
row text-starting-gif89a.txt unsupported_type image/gif "plain ASCII text that begins with GIF89a (libmagic says image/gif)"
: >"$OUT/empty.bin"
row empty.bin empty inode/x-empty "0 bytes (magic_buffer: application/x-empty)"
py random "$OUT/random-bytes.bin" 20240229 4096
row random-bytes.bin unsupported_type application/octet-stream "4096 pseudo-random bytes, seed 20240229"

# ================================================================ limit cases
ff -f lavfi -i "testsrc=size=64x48:rate=1:duration=40" "${X264[@]}" -crf 40 -g 10 "${BX[@]}" \
  -f mp4 "$OUT/too-long-video-40s.mp4"
row too-long-video-40s.mp4 too_long video/mp4 "64x48, 40.0 s, 1 fps, 40 frames, H.264, ftyp isom (limit 30 s)"
py png-huge "$OUT/too-many-pixels-30000x30000.png" 30000 30000
row too-many-pixels-30000x30000.png too_many_pixels image/png "30000x30000 = 900 Mpx, 1-bit grayscale, all black (3.6 GB as RGBA)"
read -r cut total < <(py jpeg-cut "$OUT/jpeg-baseline.jpg" "$OUT/truncated-jpeg-no-eoi.jpg")
row truncated-jpeg-no-eoi.jpg truncated image/jpeg "jpeg-baseline.jpg cut to $cut of $total bytes, mid scan data, no EOI"
read -r cut total < <(py png-cut "$OUT/png-rgba.png" "$OUT/truncated-png-no-iend.png")
row truncated-png-no-iend.png truncated image/png "png-rgba.png cut to $cut of $total bytes, mid IDAT, no IEND"
read -r cut total < <(py gif-cut "$OUT/gif-animated.gif" "$OUT/truncated-gif-no-trailer.gif")
row truncated-gif-no-trailer.gif truncated image/gif "gif-animated.gif cut to $cut of $total bytes, mid frame data, no trailer"
read -r cut total _ < <(py mdat-cut "$OUT/mp4-isom.mp4" "$OUT/truncated-mp4-mdat.mp4")
row truncated-mp4-mdat.mp4 truncated video/mp4 "mp4-isom.mp4 cut to $cut of $total bytes, mid mdat, moov (at the end) lost"
ff "${VID2[@]}" "${X264[@]}" "${BX[@]}" -f mp4 -movflags +faststart mp4-faststart.mp4
read -r cut total _ < <(py mdat-cut mp4-faststart.mp4 "$OUT/truncated-mp4-faststart-mdat.mp4")
row truncated-mp4-faststart-mdat.mp4 truncated video/mp4 "faststart MP4 (ftyp moov free mdat) cut to $cut of $total bytes, mid mdat, moov intact"
read -r ifd _ < <(py tiff-bad-ifd "$OUT/tiff-little-endian.tiff" "$OUT/truncated-tiff-ifd-past-eof.tiff")
row truncated-tiff-ifd-past-eof.tiff truncated image/tiff "tiff-little-endian.tiff with first IFD offset $ifd, past the end of the file"

# ================================================================ codecs
# One file per row group of the decodability table (Sources/AttachmentKit/Validation/
# CodecTable.swift). Video 1 s 160x120 at 15 fps; audio 48 kHz.
TONE48="$(TONE 48000 1)"
ff "${VID1[@]}" -c:v libx265 -preset ultrafast -tag:v hvc1 -pix_fmt yuv420p \
  -x265-params "log-level=error:crf=35:pools=none:frame-threads=1" "${BX[@]}" -f mp4 "$OUT/mp4-hevc.mp4"
row mp4-hevc.mp4 accepted mp4 "160x120, 1.0 s, 15 fps, HEVC Main (hvc1), codecs hvc1.1.6.L30.90"
ff "${VID1[@]}" -c:v libaom-av1 -cpu-used 8 -crf 50 -b:v 0 -row-mt 0 -pix_fmt yuv420p "${BX[@]}" \
  -f mp4 "$OUT/mp4-av1.mp4"
row mp4-av1.mp4 accepted mp4 "160x120, 1.0 s, 15 fps, AV1 (av01): decodes only on some devices (warning), codecs av01.0.00M.08"
ff "${VID1[@]}" -f lavfi -i "$TONE48" -c:v libvpx-vp9 -deadline realtime -cpu-used 8 -crf 50 -b:v 0 \
  -pix_fmt yuv420p -c:a aac -b:a 32k -ac 1 "${BX[@]}" -movflags +faststart -f mp4 "$OUT/mp4-vp9-aac.mp4"
row mp4-vp9-aac.mp4 unsupported_codec video/mp4 "160x120, 1.0 s, VP9 (vp09) + AAC-LC, moov first: no video track decodes, codecs vp09.00.10.08 mp4a.40.2"
ff -f lavfi -i "$TONE48" -c:a libopus -b:a 24k -ac 1 "${BX[@]}" -f mp4 "$OUT/m4a-opus.mp4"
row m4a-opus.mp4 accepted aac "1.0 s, Opus in MP4 (Opus/dOps), 48 kHz mono: depends on the iOS version (warning), codecs opus"
ff -f lavfi -i "$TONE48" -c:a ac3 -b:a 64k -ac 1 "${BX[@]}" -f mp4 "$OUT/m4a-ac3.mp4"
row m4a-ac3.mp4 accepted aac "1.0 s, AC-3 in MP4 (ac-3/dac3), 48 kHz mono, codecs ac-3"
ff -f lavfi -i "$TONE48" -c:a eac3 -b:a 64k -ac 1 "${BX[@]}" -f mp4 "$OUT/m4a-eac3.mp4"
row m4a-eac3.mp4 accepted aac "1.0 s, E-AC-3 in MP4 (ec-3/dec3), 48 kHz mono, codecs ec-3"
ff -f lavfi -i "$(TONE 48000 0.25)" -c:a dca -strict -2 -ac 2 "${BX[@]}" -f mp4 "$OUT/m4a-dts.mp4"
row m4a-dts.mp4 unsupported_codec video/mp4 "0.25 s, DTS in MP4 (mp4a, esds object type 0xA9), moov last, codecs dtsc"
ff -f lavfi -i "$(TONE 48000 0.25)" -c:a truehd -strict -2 -ac 2 "${BX[@]}" -f mp4 "$OUT/m4a-truehd.mp4"
row m4a-truehd.mp4 unsupported_codec video/mp4 "0.25 s, Dolby TrueHD in MP4 (mlpa), codecs mlpa"
ff "${VID1[@]}" -f lavfi -i "$(TONE 48000 0.25)" "${X264[@]}" -c:a dca -strict -2 -ac 2 "${BX[@]}" \
  -f mp4 "$OUT/mp4-h264-dts.mp4"
row mp4-h264-dts.mp4 accepted mp4 "160x120, 1.0 s, 15 fps, H.264 + DTS audio: the video plays, the undecodable audio track is only a warning (warning), codecs avc1.64000A dtsc"
ff -f lavfi -i "$(TONE 8000)" -c:a pcm_s24le -ac 1 "${BX[@]}" -f wav "$OUT/wav-extensible-pcm24.wav"
row wav-extensible-pcm24.wav accepted wav "1.0 s, PCM s24le 8 kHz mono in WAVE_FORMAT_EXTENSIBLE (sub-format PCM), codecs 1"
ff -f lavfi -i "$(TONE 8000)" -c:a adpcm_ms -ac 1 "${BX[@]}" -f wav "$OUT/wav-ms-adpcm.wav"
row wav-ms-adpcm.wav unsupported_codec audio/x-wav "1.0 s, Microsoft ADPCM (format tag 2), 8 kHz mono, codecs 2"
ff "${VID1[@]/rate=15/rate=25}" -f lavfi -i "$TONE48" -c:v mpeg2video -b:v 64k -g 12 -c:a ac3 -b:a 64k -ac 1 \
  "${BX[@]}" -f vob "$OUT/mpeg2-ps-ac3.mpg"
row mpeg2-ps-ac3.mpg accepted mpeg "160x120, 1.0 s, 25 fps, MPEG-2 program stream (VOB), MPEG-2 video + AC-3 in private stream 1 (sub-stream 0x80), codecs mp4v.61 ac-3"
py mp3-pad "$OUT/mp3-no-tag.mp3" "$OUT/mp3-leading-zeros.mp3" 2000
row mp3-leading-zeros.mp3 accepted mp3 "1.0 s, mp3-no-tag.mp3 after 2000 zero bytes (no tag): padding skipped (warning), codecs mp3"
py mp3-trail "$OUT/mp3-no-tag.mp3" "$OUT/mp3-trailing-garbage.mp3" 18 9000
row mp3-trailing-garbage.mp3 accepted mp3 "1.0 s, mp3-no-tag.mp3 (4180 bytes) followed by 9000 random bytes without FF: ignored (warning), codecs mp3"
py jpeg-short-app0 "$OUT/jpeg-baseline.jpg" "$OUT/jpeg-short-app0.jpg"
row jpeg-short-app0.jpg unsupported_type image/jpeg "64x48, JFIF APP0 declares 16 bytes but holds a 6-byte thumbnail more, whose first bytes FF 80 libjpeg reads as a marker (\"Unsupported marker type 0x80\": libvips cannot open it)"

# ================================================================ check
cd "$OUT"
total=0
bad=0
while IFS=$'\t' read -r f expect type notes; do
  [[ "$f" == file ]] && continue
  size=$(stat -c %s "$f")
  total=$((total + size))
  if ((size > 300 * 1024)); then
    echo "make-samples: $f is $size bytes (over 300 KiB)" >&2
    bad=1
  fi
  if [[ "$expect" != accepted ]]; then
    mime=$(file --mime-type -b "$f")
    # a row AttachmentKit names otherwise says what libmagic says in its notes
    [[ "$mime" == "$type" || "$notes" == *"libmagic: $mime"* ]] || echo "make-samples: note: libmagic says $mime for $f, manifest says $type" >&2
  fi
done <"$MANIFEST"
count=$(($(wc -l <"$MANIFEST") - 1))
echo "make-samples: wrote $count samples ($total bytes) and manifest.tsv to ${OUT#"$ROOT"/}"
exit "$bad"
