#!/usr/bin/env python3
"""Runs `attachkit rescue` on every image, video and audio file of one or more folders (other
projects' test files, kept outside this repository) and checks what it delivers.

For each file: libmagic's MIME type; whether a reference decoder reads it whole (the `ffmpeg`
command to null with -xerror for audio and video; `vips copy` for images, falling back to
ffmpeg); attachkit's outcome, code and actions; and, for a delivered file, whether the same
reference decoder reads it whole. One TSV row per file on standard output, a summary on
standard error.

    python3 scripts/measure-corpus.py DIR [DIR ...] > results.tsv
    ATTACHKIT=.build/release/attachkit (the default) picks the binary.

Issue #42 ran it on sindresorhus/file-type's fixture/ and python-pillow/Pillow's Tests/images/.
"""
import collections, json, os, subprocess, sys, tempfile

BIN = os.environ.get("ATTACHKIT", ".build/release/attachkit")


def run(cmd, timeout=60):
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
        return p.returncode, p.stdout, p.stderr
    except subprocess.TimeoutExpired:
        return -1, "", "timeout"


def mime(path):
    return run(["file", "--mime-type", "-b", path])[1].strip()


def ffmpeg_decodes(path):
    rc, _, err = run(["ffmpeg", "-nostdin", "-v", "error", "-xerror", "-i", path, "-f", "null", "-"], 120)
    # The null muxer's own complaints (timestamps rounded into its time base) are not decoding.
    lines = [l for l in err.splitlines()
             if l.strip() and not l.startswith("[null @") and "Last message repeated" not in l]
    return rc == 0 and not lines


def vips_decodes(path):
    with tempfile.TemporaryDirectory() as d:
        # The whole image read; libjpeg's and libtiff's warnings are not failures, an error is.
        rc, _, err = run(["vips", "copy", path, d + "/x.v"])
        return rc == 0 and "error in tile" not in err


def decodes(path, category):
    if category == "image":
        return vips_decodes(path) or ffmpeg_decodes(path)
    return ffmpeg_decodes(path)


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    tally = collections.Counter()
    for root in sys.argv[1:]:
        for name in sorted(os.listdir(root)):
            path = os.path.join(root, name)
            kind = mime(path) if os.path.isfile(path) else ""
            category = kind.split("/")[0]
            if category not in ("image", "video", "audio"):
                continue
            reference = decodes(path, "image" if category == "image" else "media")
            with tempfile.TemporaryDirectory() as d:
                out = d + "/out"
                rc, so, se = run([BIN, "rescue", "--json", "-q", "-o", out, path], 60)
                try:
                    answer = json.loads(so.splitlines()[0])
                except (IndexError, ValueError):
                    answer = {"outcome": "crash", "error": {"code": f"exit {rc}", "message": se[:160]}}
                outcome = answer.get("outcome", "")
                error = answer.get("error") or {}
                actions = ",".join((answer.get("rescued") or {}).get("actions", []))
                delivered = ""
                if outcome == "accepted":
                    ok = decodes(out, answer.get("category", ""))
                    delivered = "decodes" if ok else "DOES-NOT-DECODE"
                tally[(reference, outcome, delivered)] += 1
                print("\t".join([
                    os.path.basename(os.path.normpath(root)), name, kind,
                    "reference-decodes" if reference else "reference-fails", outcome,
                    error.get("code", ""), answer.get("type", ""), actions, delivered,
                    error.get("message", "")[:200],
                ]), flush=True)
    for (reference, outcome, delivered), count in sorted(tally.items(), key=lambda x: -x[1]):
        print(f"{count:5}  reference {'decodes' if reference else 'fails':8} {outcome:9} {delivered}",
              file=sys.stderr)


if __name__ == "__main__":
    main()
