//! `wireprobe check nuum` on arbitrary input: NDJSON framing, transcript lines or bare events,
//! and the nuum checker with its validators. It must judge anything without panicking.
#![no_main]

use libfuzzer_sys::fuzz_target;
use wireprobe::protocol;
use wireprobe::transcript::Direction;

fuzz_target!(|data: &[u8]| {
    let Some(p) = protocol::get("nuum") else {
        return;
    };
    let _ = wireprobe::check::check_stream(p, data, Some(Direction::Server), |_| {});
});
