# A private PulseAudio server for the real-capture tests. Sourced, not run, after setup.sh.
#
# The server has its own socket in $VERBATIM_PULSE_DIR, so the tests never hear or change the
# desktop's sound server: a null sink `verbatim_sink` is its default output and `verbatim_mic`, a
# virtual microphone that records what that sink plays, its default input. It runs as the current
# user (root included: PulseAudio then only warns that it is not meant to run as root), with no
# sound card, D-Bus or display, and stays up for later runs.
#
# A null sink that no client asks a latency of renders 2 s ahead at a time, which would hold back
# the first samples of every capture (and so its start) by up to 2 s: a loopback from its monitor
# into a second null sink, `verbatim_discard`, asks for 100 ms for good.

VERBATIM_PULSE_DIR="${VERBATIM_PULSE_DIR:-${XDG_RUNTIME_DIR:-/tmp}/verbatim-pulse-$(id -u)}"

# Prints the value of `pactl info`'s line NAME (for example "Default Sink").
pulse_info() { pactl info 2>/dev/null | sed -n "s/^$1: //p"; }

pulse_answers() { pactl info >/dev/null 2>&1; }

# False where PipeWire serves PulseAudio clients and PulseAudio is not installed: installing
# PulseAudio beside PipeWire's server could take the desktop's sound over.
pulseaudio_may_be_installed() {
    command -v pulseaudio >/dev/null 2>&1 && return 0
    ! dpkg-query -W -f='${Status}' pipewire-pulse 2>/dev/null | grep -q "install ok installed"
}

# The sound server's packages where they may be installed, without starting it: scripts/test
# installs them while it builds.
pulseaudio_packages() {
    pulseaudio_may_be_installed && echo "${VERBATIM_TEST_APT_PACKAGES[@]}"
    return 0
}

# Starts the server unless it answers, adds the test devices it lacks and makes them the defaults;
# exports PULSE_SERVER and PULSE_COOKIE (for cpal, paplay and pactl) and VERBATIM_TEST_PULSE (the server's folder:
# the tests take turns on the sink with a lock there, and reach the server's command line, for
# pacmd, at its `cli` socket). A second call changes nothing.
ensure_pulseaudio() {
    local dir=$VERBATIM_PULSE_DIR
    if ! pulseaudio_may_be_installed; then
        log "PipeWire serves PulseAudio clients here and PulseAudio is not installed: the real-capture tests will be skipped"
        return 0
    fi
    ensure_packages "${VERBATIM_TEST_APT_PACKAGES[@]}"
    mkdir -p "$dir"
    chmod 700 "$dir"
    export PULSE_SERVER="unix:$dir/native"
    # The server's own cookie (anonymous clients are let in too): HOME may be unwritable.
    export PULSE_COOKIE="$dir/cookie"
    local lock
    exec {lock}>"$dir/setup.lock"
    flock "$lock"
    if ! pulse_answers; then
        log "starting a private PulseAudio server in $dir"
        # -n: no default.pa (no hardware detection, no D-Bus or X11 modules, no saved state).
        PULSE_RUNTIME_PATH="$dir" PULSE_STATE_PATH="$dir/state" \
            pulseaudio --daemonize=yes --system=no -n --exit-idle-time=-1 --disallow-exit=yes \
            --high-priority=no --realtime=no --disable-shm=yes --use-pid-file=yes \
            --log-target="file:$dir/log" \
            --load="module-native-protocol-unix socket=$dir/native auth-anonymous=1 cookie=$dir/cookie" {lock}>&- ||
            log "pulseaudio exited with $?; waiting for the server anyway"
        local tries=0
        until pulse_answers; do
            tries=$((tries + 1))
            if [ "$tries" -gt 50 ]; then
                log "the PulseAudio server does not answer on $PULSE_SERVER (see $dir/log)"
                tail -n 20 "$dir/log" >&2 || true
                exec {lock}>&-
                return 1
            fi
            sleep 0.1
        done
    fi
    if ! pactl list short modules | grep -q module-cli-protocol-unix; then
        pactl load-module module-cli-protocol-unix "socket=$dir/cli" >/dev/null
    fi
    if ! pactl list short sinks | cut -f2 | grep -qx verbatim_sink; then
        pactl load-module module-null-sink sink_name=verbatim_sink rate=48000 \
            sink_properties=device.description=Verbatim-test-output >/dev/null
    fi
    if ! pactl list short sources | cut -f2 | grep -qx verbatim_mic; then
        pactl load-module module-remap-source master=verbatim_sink.monitor \
            source_name=verbatim_mic source_properties=device.description=Verbatim-test-microphone \
            >/dev/null
    fi
    if ! pactl list short sinks | cut -f2 | grep -qx verbatim_discard; then
        pactl load-module module-null-sink sink_name=verbatim_discard rate=48000 \
            sink_properties=device.description=Verbatim-test-discard >/dev/null
    fi
    if ! pactl list short modules | grep -q 'module-loopback.*source=verbatim_sink.monitor'; then
        pactl load-module module-loopback source=verbatim_sink.monitor sink=verbatim_discard \
            latency_msec=100 source_dont_move=true sink_dont_move=true >/dev/null
    fi
    [ "$(pulse_info 'Default Sink')" = verbatim_sink ] || pactl set-default-sink verbatim_sink
    [ "$(pulse_info 'Default Source')" = verbatim_mic ] || pactl set-default-source verbatim_mic
    flock -u "$lock"
    exec {lock}>&-
    export VERBATIM_TEST_PULSE="$dir"
}
