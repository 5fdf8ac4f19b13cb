//! `arbiter-engine`: the engines bundled with arbiter (see the library for the commands).

fn main() {
    arbiter_engines::run()
}
