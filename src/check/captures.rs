//! Checking a capture of one answer's body as `curl` saves it: raw SSE text, or AG-UI's
//! length-prefixed protobuf frames, each judged as the live stream would be, then the body's
//! end (unless the capture was cut).

use super::{bad_line, judge_server, CheckSummary, Finding};
use crate::judge::{observed_of, Judge};
use crate::ndjson;
use crate::protocol::{Observed, Protocol};
use crate::transcript::stored_record;
use crate::transport::Received;
use std::io::BufRead;

/// True when captured text starts like an SSE stream (a field or a comment), not like JSON.
pub(super) fn looks_like_sse(start: &[u8]) -> bool {
    let start = start.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(start);
    let first = start
        .split(|b| *b == b'\n' || *b == b'\r')
        .find(|l| !l.iter().all(u8::is_ascii_whitespace));
    first.is_some_and(|line| {
        line.starts_with(b":")
            || [&b"data:"[..], b"id:", b"event:", b"retry:"]
                .iter()
                .any(|field| line.starts_with(field))
    })
}

/// Checks raw SSE text as the events a live stream delivered from the server; a finding's
/// `line` is the event's number in the stream.
pub(super) fn check_sse<R: BufRead>(
    protocol: &dyn Protocol,
    reader: R,
    one_answer: bool,
    ends_answer: bool,
    mut on_finding: impl FnMut(&Finding),
) -> CheckSummary {
    let mut judge = Judge::new(protocol);
    let mut summary = CheckSummary::default();
    let condense = protocol.session(protocol.transport()).condenses();
    crate::transport::sse::read_captured(reader, ndjson::DEFAULT_MAX_LINE, |captured| {
        use crate::transport::sse::Captured;
        summary.lines += 1;
        let (data, meta) = match captured {
            Captured::Event { data, meta } => (data, meta),
            Captured::Failed(e) => {
                let line = summary.lines;
                bad_line(&mut summary, line, e.to_string());
                return;
            }
            // A notice of the framing (a line end a binding pins) is judged as the transport's
            // observation when the capture is one answer; a line the parser dropped is not.
            Captured::Notice(what) => {
                if one_answer {
                    let notice = Observed::Notice(&what);
                    judge_server(&mut judge, &mut summary, notice, &mut on_finding);
                }
                return;
            }
        };
        summary.events += 1;
        let seen = stored_record(&Received::SseEvent { data, meta }, condense);
        judge_server(
            &mut judge,
            &mut summary,
            observed_of(&seen),
            &mut on_finding,
        );
    });
    if ends_answer {
        let error = summary.bad_lines.last().map(|b| b.reason.clone());
        let end = Observed::AnswerEnded {
            error: error.as_deref(),
        };
        judge_server(&mut judge, &mut summary, end, &mut on_finding);
    }
    summary.unjudged = judge.unjudged();
    summary
}

/// True when captured bytes start like length-prefixed binary frames (a 4-byte big-endian
/// length whose first byte is zero, then a protobuf length-delimited field), not like text.
pub(super) fn looks_like_frames(start: &[u8]) -> bool {
    match start {
        [0, _, _, _, key, ..] => key & 7 == 2 && (key >> 3) >= 1,
        _ => false,
    }
}

/// Checks a capture of length-prefixed binary frames (AG-UI's protobuf answer, as saved from
/// `curl`): each frame decoded as the protocol's session decodes it live, then the body's end;
/// a finding's `line` is the frame's number.
pub(super) fn check_frames<R: BufRead>(
    protocol: &dyn Protocol,
    mut reader: R,
    ends_answer: bool,
    mut on_finding: impl FnMut(&Finding),
) -> CheckSummary {
    use crate::transport::{length_prefixed::Splitter, Frame};
    let mut session = protocol.session(crate::transport::TransportKind::Protobuf);
    let mut judge = Judge::new(protocol);
    let mut summary = CheckSummary::default();
    let mut splitter = Splitter::new(ndjson::DEFAULT_MAX_LINE);
    let mut ended = None;
    loop {
        let chunk = match reader.fill_buf() {
            Ok([]) => break,
            Ok(chunk) => chunk.to_vec(),
            Err(e) => {
                ended = Some(format!("the capture could not be read: {e}"));
                break;
            }
        };
        reader.consume(chunk.len());
        let mut frames = Vec::new();
        let split = splitter.push(&chunk, |f| frames.push(f));
        for frame in frames {
            summary.lines += 1;
            summary.events += 1;
            let len = frame.len();
            match session.decode(&Frame::Binary(frame)) {
                crate::protocol::Decoded::Event(event) => {
                    let item = Observed::Event((&event).into(), None);
                    judge_server(&mut judge, &mut summary, item, &mut on_finding)
                }
                // A frame the protocol cannot read: judged by its length.
                _ => judge_server(
                    &mut judge,
                    &mut summary,
                    Observed::Binary(len),
                    &mut on_finding,
                ),
            }
        }
        if let Err(e) = split {
            ended = Some(e.to_string());
            break;
        }
    }
    let error = ended.or_else(|| splitter.finish().err().map(|e| e.to_string()));
    if let Some(reason) = &error {
        let line = summary.lines + 1;
        bad_line(&mut summary, line, reason.clone());
    }
    if ends_answer {
        let end = Observed::AnswerEnded {
            error: error.as_deref(),
        };
        judge_server(&mut judge, &mut summary, end, &mut on_finding);
    }
    summary.unjudged = judge.unjudged();
    summary
}
