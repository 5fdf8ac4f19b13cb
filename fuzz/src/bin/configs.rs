fn main() {
    afl::fuzz!(|data: &[u8]| arbiter_fuzz::configs(data));
}
