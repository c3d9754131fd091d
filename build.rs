//! Finds the system libopus with pkg-config (Debian: `libopus-dev`), which the Opus decoder
//! links through `opusic-sys` (built without its bundled copy); with real capture, compiles the
//! handler that routes alsa-lib's messages to the log (`src/audio/capture/cpal/alsa_messages.c`).

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    if let Err(e) = pkg_config::Config::new()
        .atleast_version("1.1")
        .probe("opus")
    {
        panic!(
            "libopus was not found by pkg-config ({e}); install libopus-dev and pkg-config \
             (scripts/lib/setup.sh does)"
        );
    }
    if std::env::var_os("CARGO_FEATURE_CAPTURE").is_some() {
        let source = "src/audio/capture/cpal/alsa_messages.c";
        println!("cargo:rerun-if-changed={source}");
        cc::Build::new()
            .file(source)
            .compile("verbatim_alsa_messages");
        println!("cargo:rustc-link-lib=asound");
    }
}
