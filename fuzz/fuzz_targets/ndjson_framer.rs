//! The bounded NDJSON framer: however the input is chunked, it yields the same lines, none
//! longer than the bound. The first two bytes pick the read size and the line bound.
#![no_main]

use libfuzzer_sys::fuzz_target;
use std::io::BufReader;
use wireprobe::ndjson::{read_line, Line};

fn lines(data: &[u8], chunk: usize, max: usize) -> Vec<(Line, Vec<u8>)> {
    let mut reader = BufReader::with_capacity(chunk, data);
    let mut buf = Vec::new();
    let mut out = Vec::new();
    while let Ok(line) = read_line(&mut reader, &mut buf, max) {
        if line == Line::Eof {
            break;
        }
        assert!(
            buf.len() <= max,
            "a line of {} bytes passed a bound of {max}",
            buf.len()
        );
        out.push((line, buf.clone()));
    }
    out
}

fuzz_target!(|data: &[u8]| {
    let [a, b, rest @ ..] = data else { return };
    let chunk = usize::from(*a % 16) + 1;
    let max = usize::from(*b) + 1;
    assert_eq!(
        lines(rest, chunk, max),
        lines(rest, 1 << 16, max),
        "chunk size {chunk} changed the lines"
    );
});
