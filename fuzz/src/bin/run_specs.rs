fn main() {
    afl::fuzz!(|data: &[u8]| arbiter_fuzz::run_specs(data));
}
