//! The bodies of the cargo-fuzz targets in `fuzz/` (each target there is one line calling one
//! of these). They live in the library so `cargo test` runs every one over the corpus
//! (`tests/it/fuzz_targets.rs`), while coverage-guided fuzzing stays in `scripts/fuzz-smoke.sh`.
//! Each panics only when it finds a bug.

use crate::ndjson::{read_line, Line};
use crate::protocol::{self, Decoded, Observed};
use crate::transcript::Direction;
use crate::transport::socketio::packet::{parse_eio, parse_sio};
use crate::transport::sse::Captured;
use crate::transport::Frame;
use std::io::BufReader;

/// A target's body: it takes any bytes.
pub type Target = fn(&[u8]);

/// Every target, by the name of its binary in `fuzz/`.
pub const ALL: [(&str, Target); 13] = [
    ("check_haip", check_haip),
    ("check_huma", check_huma),
    ("check_nuum", check_nuum),
    ("check_hpd", check_hpd),
    ("check_uae", check_uae),
    ("check_agui", check_agui),
    ("agui_frames", agui_frames),
    ("hpd_sse", hpd_sse),
    ("haip_frames", haip_frames),
    ("haip_fast_path", haip_fast_path),
    ("socketio_packet", socketio_packet),
    ("nuum_input", nuum_input),
    ("ndjson_framer", ndjson_framer),
];

/// `check` of a protocol over arbitrary bytes (bare server lines allowed).
fn check(id: &str, data: &[u8]) {
    if let Some(p) = protocol::get(id) {
        let _ = crate::check::check_stream(
            p,
            data,
            crate::check::Capture {
                bare_from: Some(Direction::Server),
                cut: false,
            },
            |_| {},
        );
    }
}

/// `wireprobe check haip` over arbitrary bytes.
pub fn check_haip(data: &[u8]) {
    check("haip", data);
}

/// `wireprobe check huma` over arbitrary bytes.
pub fn check_huma(data: &[u8]) {
    check("huma", data);
}

/// `wireprobe check nuum` over arbitrary bytes.
pub fn check_nuum(data: &[u8]) {
    check("nuum", data);
}

/// `wireprobe check hpd` over arbitrary bytes: NDJSON lines, or raw SSE text when it starts
/// like a stream.
pub fn check_hpd(data: &[u8]) {
    check("hpd", data);
}

/// `wireprobe check uae` over arbitrary bytes: the envelope validator and the checker that
/// pairs calls with results, on every line.
pub fn check_uae(data: &[u8]) {
    check("uae", data);
}

/// `wireprobe check agui` over arbitrary bytes: raw SSE text, protobuf frames or NDJSON lines,
/// as their first bytes say.
pub fn check_agui(data: &[u8]) {
    check("agui", data);
}

/// AG-UI's protobuf answers: the length-prefixed splitter yields the same frames however the
/// bytes are cut into reads, and an event decoded from a frame comes back the same through
/// the encoder and the decoder (what the reference sends is what the checker reads).
pub fn agui_frames(data: &[u8]) {
    use crate::protocol::agui::proto;
    use crate::transport::length_prefixed::Splitter;
    let [a, rest @ ..] = data else { return };
    let split = |chunk: usize| {
        let mut s = Splitter::new(1 << 16);
        let mut frames = Vec::new();
        let mut failed = None;
        for piece in rest.chunks(chunk) {
            if let Err(e) = s.push(piece, |f| frames.push(f)) {
                failed = Some(e);
                break;
            }
        }
        (frames, failed.or_else(|| s.finish().err()))
    };
    let whole = split(rest.len().max(1));
    let cut = split(usize::from(*a % 16) + 1);
    assert_eq!(cut, whole, "the read size changed the frames");
    // The bytes as one frame too: most inputs are not framed at all.
    for frame in whole.0.iter().map(Vec::as_slice).chain([rest]) {
        let Ok(event) = proto::decode(frame) else {
            continue;
        };
        let again = proto::encode(&event).expect("a decoded event encodes");
        assert_eq!(
            proto::decode(&again).ok().as_ref(),
            Some(&event),
            "an event changed through the encoder"
        );
    }
}

/// The SSE reader `check` and the live transport share, and the HPD envelope validator and
/// client decoder on every event it yields: however the text is cut into reads, the same
/// events come out.
pub fn hpd_sse(data: &[u8]) {
    let [a, rest @ ..] = data else { return };
    let events = |chunk: usize| {
        let mut seen = Vec::new();
        let reader = BufReader::with_capacity(chunk, rest);
        crate::transport::sse::read_captured(reader, 4096, |r| seen.push(r));
        seen
    };
    let shown = |all: &[Captured]| all.iter().map(|c| format!("{c:?}")).collect::<Vec<_>>();
    let whole = events(1 << 16);
    let cut = events(usize::from(*a % 16) + 1);
    assert_eq!(
        shown(&cut),
        shown(&whole),
        "the read size changed the events"
    );
    let Some(p) = protocol::get("hpd") else {
        return;
    };
    let mut session = p.session(protocol::TransportKind::Sse);
    let mut out = Vec::new();
    for captured in &whole {
        if let Captured::Event { data, .. } = captured {
            if let Decoded::Event(event) = session.decode(&Frame::Text(data.clone())) {
                crate::protocol::hpd::validate::envelope(&event, &mut out);
            }
        }
    }
}

/// The HAIP fast path against the full schema, on each line taken as one message's text: it
/// never accepts what the schema refuses, and reads the facts and session the full path reads
/// (`check` reads messages from their text, a live run from their tree: both are held).
pub fn haip_fast_path(data: &[u8]) {
    for line in data.split(|b| *b == b'\n') {
        if let Ok(text) = std::str::from_utf8(line) {
            haip_fast_path_on(text);
        }
    }
}

/// Which of a message's text and its tree the HAIP fast path accepted ([`haip_fast_path_on`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct FastPathTaken {
    pub text: bool,
    pub tree: bool,
}

/// [`haip_fast_path`] on one message's text; panics where the fast path and the schema differ.
pub fn haip_fast_path_on(text: &str) -> FastPathTaken {
    use crate::protocol::haip::{facts::Facts, fast, schema::schema};
    use serde_json::Value;
    let agrees = |value: &Value, (facts, session): (Facts<'_>, &str)| {
        let mut violations = Vec::new();
        schema().check(value, &mut violations);
        assert!(
            violations.is_empty(),
            "the fast path accepted a message the schema refuses:\n{text}\n{violations:?}"
        );
        assert_eq!(
            Facts::from_value(value),
            Some(facts),
            "facts differ for {text}"
        );
        assert_eq!(
            Some(session),
            value["session"].as_str(),
            "session of {text}"
        );
    };
    let tree = serde_json::from_str::<Value>(text).ok();
    let mut taken = FastPathTaken::default();
    if let Some(value) = &tree {
        if let Some(accepted) = fast::accept_value(value) {
            taken.tree = true;
            agrees(value, accepted);
        }
    }
    if let Some(accepted) = fast::accept(text) {
        taken.text = true;
        let value = tree
            .as_ref()
            .unwrap_or_else(|| panic!("the fast path accepted text that is no JSON: {text}"));
        agrees(value, accepted);
    }
    taken
}

/// HAIP frames (one per line; `#` starts a binary frame) through the session's decoder and the
/// checker, two from the server for every one from the client.
pub fn haip_frames(data: &[u8]) {
    let Some(p) = protocol::get("haip") else {
        return;
    };
    let mut session = p.session(p.transport());
    let mut checker = p.checker();
    let mut out = Vec::new();
    checker.observe(Direction::Server, 0, Observed::Connect(""), &mut out);
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
        let at = i as u64;
        match session.decode(&frame) {
            Decoded::Event(event) => {
                checker.observe(from, at, Observed::Event((&event).into(), None), &mut out)
            }
            Decoded::Binary(len) => checker.observe(from, at, Observed::Binary(len), &mut out),
            Decoded::Garbage(text) => checker.observe(from, at, Observed::Garbage(&text), &mut out),
            Decoded::Control => {}
        }
        out.clear();
    }
    checker.observe(
        Direction::Server,
        0,
        Observed::Closed { code: None },
        &mut out,
    );
}

/// The Engine.IO and Socket.IO packet parsers and the HUMA session's decoder: a packet that
/// parses must encode to text that parses to the same packet.
pub fn socketio_packet(data: &[u8]) {
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
        let _ = p
            .session(p.transport())
            .decode(&Frame::Text(text.to_owned()));
    }
}

/// The Nuum input-line parser the reference agent and the validator share, and the session's
/// decoder for output lines.
pub fn nuum_input(data: &[u8]) {
    let _ = crate::protocol::nuum::input::parse(data);
    if let (Some(p), Ok(text)) = (protocol::get("nuum"), std::str::from_utf8(data)) {
        let _ = p
            .session(p.transport())
            .decode(&Frame::Text(text.to_owned()));
    }
}

/// The bounded NDJSON framer: however the input is chunked, it yields the same lines, none
/// longer than the bound. The first two bytes pick the read size and the line bound.
pub fn ndjson_framer(data: &[u8]) {
    let [a, b, rest @ ..] = data else { return };
    let chunk = usize::from(*a % 16) + 1;
    let max = usize::from(*b) + 1;
    assert_eq!(
        framed_lines(rest, chunk, max),
        framed_lines(rest, 1 << 16, max),
        "chunk size {chunk} changed the lines"
    );
}

fn framed_lines(data: &[u8], chunk: usize, max: usize) -> Vec<(Line, Vec<u8>)> {
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
