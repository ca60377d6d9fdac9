//! HAIP's frame reader: text frames through the client session's decoder and the checker,
//! binary frames as the second half of a two-frame media message. Input lines are frames;
//! a line starting with `#` is a binary frame of the rest's length.
#![no_main]

use libfuzzer_sys::fuzz_target;
use wireprobe::protocol::{self, Decoded, Observed};
use wireprobe::transcript::Direction;
use wireprobe::transport::Frame;

fuzz_target!(|data: &[u8]| {
    let Some(p) = protocol::get("haip") else {
        return;
    };
    let mut session = p.session();
    let mut checker = p.checker();
    let mut out = Vec::new();
    checker.observe(Direction::Server, 0, Observed::Connect, &mut out);
    for (i, line) in data.split(|b| *b == b'\n').enumerate() {
        let frame = match line.split_first() {
            Some((b'#', rest)) => Frame::Binary(rest.to_vec()),
            _ => match std::str::from_utf8(line) {
                Ok(text) => Frame::Text(text.to_owned()),
                Err(_) => Frame::RawText(line.to_vec()),
            },
        };
        let from = if i % 3 == 2 {
            Direction::Client
        } else {
            Direction::Server
        };
        match session.decode(&frame) {
            Decoded::Event(event) => {
                checker.observe(from, i as u64, Observed::Event(&event), &mut out)
            }
            Decoded::Binary(len) => {
                checker.observe(from, i as u64, Observed::Binary(len), &mut out)
            }
            Decoded::Garbage(text) => {
                checker.observe(from, i as u64, Observed::Garbage(&text), &mut out)
            }
            Decoded::Control => {}
        }
        out.clear();
    }
    checker.observe(Direction::Server, 0, Observed::Closed, &mut out);
});
