//! The Socket.IO codec wireprobe speaks HUMA over: Engine.IO and Socket.IO packet parsers,
//! and the HUMA session's decoder. A packet that parses must encode to text that parses to
//! the same packet.
#![no_main]

use libfuzzer_sys::fuzz_target;
use wireprobe::protocol;
use wireprobe::transport::socketio::packet::{parse_eio, parse_sio};
use wireprobe::transport::Frame;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let _ = parse_eio(text);
    if let Ok(packet) = parse_sio(text) {
        let encoded = packet.encode();
        match parse_sio(&encoded) {
            Ok(again) => assert_eq!(again.encode(), encoded, "encoding is not stable"),
            Err(e) => panic!("{text:?} parsed, but its encoding {encoded:?} does not: {e}"),
        }
    }
    if let Some(p) = protocol::get("huma") {
        let _ = p.session().decode(&Frame::Text(text.to_owned()));
    }
});
