# Shared setup for scripts/serve and scripts/test: installs what Verbatim needs, idempotently.
# Sourced, not run.

# Debian packages the build and the tests need.
VERBATIM_APT_PACKAGES=(build-essential pkg-config)

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

setup_all() {
    ensure_packages "${VERBATIM_APT_PACKAGES[@]}"
    ensure_rust
}
