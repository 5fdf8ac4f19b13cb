//! Links the `arbiter` binary with its segments on 2 MiB boundaries, so that at the start of a
//! run its code and tables can be moved onto huge pages whole (core/src/huge_text.rs). `separate-code`
//! keeps the code out of the pages of the read-only data, which would otherwise share its first
//! and last huge page.
fn main() {
    let os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    if os == "linux" {
        for arg in ["-Wl,-z,max-page-size=0x200000", "-Wl,-z,separate-code"] {
            println!("cargo:rustc-link-arg-bin=arbiter={arg}");
        }
    }
    println!("cargo:rerun-if-changed=build.rs");
}
