fn main() {
    afl::fuzz!(|data: &[u8]| arbiter_fuzz::engine_lines(data));
}
