//! The Nuum input-line parser the reference agent and the validator share, and the session's
//! decoder for output lines.
#![no_main]

use libfuzzer_sys::fuzz_target;
use wireprobe::protocol;
use wireprobe::protocol::nuum::input;
use wireprobe::transport::Frame;

fuzz_target!(|data: &[u8]| {
    let _ = input::parse(data);
    if let (Some(p), Ok(text)) = (protocol::get("nuum"), std::str::from_utf8(data)) {
        let _ = p.session().decode(&Frame::Text(text.to_owned()));
    }
});
