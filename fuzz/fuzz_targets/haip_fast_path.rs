//! `wireprobe::fuzz::targets::haip_fast_path` under libFuzzer (the body is in the library,
//! where `cargo test` runs it over the corpus).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| wireprobe::fuzz::targets::haip_fast_path(data));
