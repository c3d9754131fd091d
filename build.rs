//! Finds the system libopus with pkg-config (Debian: `libopus-dev`), which the Opus decoder
//! links through `opusic-sys` (built without its bundled copy).

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
}
