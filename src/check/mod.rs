//! Offline checking of recorded traffic: NDJSON transcripts streamed through a protocol's
//! checker with memory that does not grow with the input.

mod captures;

use captures::{check_frames, check_sse, looks_like_frames, looks_like_sse};

use crate::judge::{observed_of, Judge};
use crate::ndjson::{self, Line};
use crate::protocol::{Observed, Protocol};
use crate::rules::Violation;
use crate::transcript::{Direction, Observation, Record};
use crate::transport::SseMeta;
use serde::Deserialize;
use serde_json::Value;
use std::collections::BTreeMap;
use std::io::BufRead;

/// Findings kept in full; beyond this only the per-rule counts grow.
pub const MAX_KEPT_FINDINGS: usize = 1000;

/// One rule broken at one line.
#[derive(Debug, Clone)]
pub struct Finding {
    /// 1-based line number in the input.
    pub line: u64,
    pub from: Direction,
    pub violation: Violation,
}

/// A line of the input that is not a transcript line.
#[derive(Debug, Clone)]
pub struct BadLine {
    pub line: u64,
    pub reason: String,
}

/// What a check found.
#[derive(Debug, Default)]
pub struct CheckSummary {
    pub lines: u64,
    pub events: u64,
    /// The first [`MAX_KEPT_FINDINGS`] findings.
    pub findings: Vec<Finding>,
    /// Every violation, counted by rule.
    pub per_rule: BTreeMap<&'static str, u64>,
    pub bad_lines: Vec<BadLine>,
    pub bad_line_count: u64,
    /// Rules the checker could not judge on what the capture showed, and why.
    pub unjudged: Vec<crate::rules::Unjudged>,
}

/// What a capture is, beyond its lines.
#[derive(Clone, Copy, Debug, Default)]
pub struct Capture {
    /// Lines may also be bare events sent by this side (a captured stdout, say).
    pub bare_from: Option<Direction>,
    /// The capture was cut short: its end is not the end of the answer it holds, so a run
    /// still open there is not judged truncated (the report says it went unjudged).
    pub cut: bool,
}

/// A transcript line in any other shape than the one wireprobe writes (which
/// [`plain_event_line`] reads). An event is `event` (or `frame`, as a report's transcript has
/// it), with the SSE fields it came with; an observation is `observed` (see
/// [`crate::transcript::Observation`]). The event is the side's JSON whatever keys it holds.
#[derive(Deserialize)]
struct TranscriptLine {
    from: Direction,
    #[serde(default)]
    at_ms: u64,
    #[serde(default, alias = "frame")]
    event: Option<Value>,
    #[serde(default)]
    sse: Option<SseMeta>,
    #[serde(default)]
    observed: Option<Observation>,
}

/// Checks an NDJSON transcript, raw SSE text or protobuf frames (see [`Capture`]).
/// `on_finding` sees every finding as it is made.
pub fn check_stream<R: BufRead>(
    protocol: &dyn Protocol,
    mut reader: R,
    capture: Capture,
    mut on_finding: impl FnMut(&Finding),
) -> std::io::Result<CheckSummary> {
    let bare_from = capture.bare_from;
    // A binding whose every answer is a stream of its own: a capture of its events alone is
    // one answer, and the capture's end is that answer's end (a truncated run shows there),
    // unless the capture was cut.
    let one_answer = protocol
        .http_routes()
        .is_some_and(|routes| routes.stream.is_none());
    let ends_answer = one_answer && !capture.cut;
    if let Some(routes) = protocol.http_routes() {
        let start = reader.fill_buf()?;
        if !routes.framed.is_empty() && looks_like_frames(start) {
            return Ok(check_frames(protocol, reader, ends_answer, on_finding));
        }
        if looks_like_sse(start) {
            return Ok(check_sse(
                protocol,
                reader,
                one_answer,
                ends_answer,
                on_finding,
            ));
        }
    }
    // Observations in the capture (a transcript's HTTP heads and ends) say where its answers
    // end; without any, the capture's end is the answer's.
    let mut observed_any = false;
    let mut judge = Judge::new(protocol);
    let mut summary = CheckSummary::default();
    let mut buf = Vec::new();
    let mut out = Vec::new();
    loop {
        // A whole line already in the reader's buffer, in the shape wireprobe writes and
        // judged from its text, is judged where it lies: not copied out first.
        let chunk = match reader.fill_buf() {
            Ok(chunk) => chunk,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        let end = memchr::memchr(b'\n', chunk).filter(|end| *end <= ndjson::DEFAULT_MAX_LINE);
        // The line's event text was offered to the checker and refused: it is not offered again.
        let mut refused = false;
        if let Some(end) = end {
            match judge_plainly(&mut judge, &chunk[..end], &mut out) {
                Plain::Judged(from) => {
                    summary.lines += 1;
                    summary.events += 1;
                    let line_no = summary.lines;
                    record(&mut summary, line_no, from, &mut out, &mut on_finding);
                    reader.consume(end + 1);
                    continue;
                }
                Plain::Refused => refused = true,
                Plain::Other => {}
            }
        }
        let read = ndjson::read_line(&mut reader, &mut buf, ndjson::DEFAULT_MAX_LINE)?;
        let line_no = summary.lines + 1;
        match read {
            Line::Eof => break,
            Line::TooLong(len) => {
                summary.lines += 1;
                bad_line(
                    &mut summary,
                    line_no,
                    format!(
                        "line of {len} bytes is over the {} limit",
                        ndjson::DEFAULT_MAX_LINE
                    ),
                );
                continue;
            }
            Line::Complete => summary.lines += 1,
        }
        if buf.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        // The shape wireprobe writes, judged from the event's text by a checker that can: the
        // line's JSON is not read twice (a line that came in pieces, or the last one without
        // its newline). Anything else, or an event the checker is unsure of, takes the full
        // path below.
        if !refused {
            match judge_plainly(&mut judge, &buf, &mut out) {
                Plain::Judged(from) => {
                    summary.events += 1;
                    record(&mut summary, line_no, from, &mut out, &mut on_finding);
                    continue;
                }
                Plain::Refused => refused = true,
                Plain::Other => {}
            }
        }
        let (from, at_ms, frame) = match serde_json::from_slice::<TranscriptLine>(&buf) {
            Ok(t) => {
                match (t.event, t.observed) {
                    (Some(event), None) => {
                        summary.events += 1;
                        let seen = Observed::Event((&event).into(), t.sse.as_ref());
                        judge.observe(t.from, t.at_ms, seen, &mut out)
                    }
                    (None, Some(observation)) => {
                        observed_any = true;
                        let seen = Record::Observed(observation);
                        judge.observe(t.from, t.at_ms, observed_of(&seen), &mut out);
                    }
                    (Some(_), Some(_)) => {
                        bad_line(
                            &mut summary,
                            line_no,
                            "a line holds either `event` or `observed`, not both".into(),
                        );
                        continue;
                    }
                    (None, None) => {
                        bad_line(
                            &mut summary,
                            line_no,
                            "a transcript line needs `event` or `observed`".into(),
                        );
                        continue;
                    }
                }
                record(&mut summary, line_no, t.from, &mut out, &mut on_finding);
                continue;
            }
            Err(e) => {
                match bare_from {
                    // A bare event judged from its text where the checker can, as a
                    // transcript line's event is.
                    Some(side)
                        if !refused && judge_bare_plainly(&mut judge, side, &buf, &mut out) =>
                    {
                        summary.events += 1;
                        record(&mut summary, line_no, side, &mut out, &mut on_finding);
                        continue;
                    }
                    Some(side) => match serde_json::from_slice::<Value>(&buf) {
                        Ok(v) => (side, 0, v),
                        Err(_) => {
                            let text = String::from_utf8_lossy(&buf);
                            summary.events += 1;
                            judge.observe(side, 0, Observed::Garbage(&text), &mut out);
                            record(&mut summary, line_no, side, &mut out, &mut on_finding);
                            continue;
                        }
                    },
                    None => {
                        bad_line(&mut summary, line_no, format!("not a transcript line ({e}); use --from client|server for bare events"));
                        continue;
                    }
                }
            }
        };
        summary.events += 1;
        judge.observe(
            from,
            at_ms,
            Observed::Event((&frame).into(), None),
            &mut out,
        );
        record(&mut summary, line_no, from, &mut out, &mut on_finding);
    }
    if ends_answer && !observed_any && summary.events > 0 {
        let end = Observed::AnswerEnded { error: None };
        judge_server(&mut judge, &mut summary, end, &mut on_finding);
    }
    summary.unjudged = judge.unjudged();
    Ok(summary)
}

/// What offering a line to the checker as a plain event line ([`plain_event_line`]) came to.
enum Plain {
    /// The line is not in that shape.
    Other,
    /// The checker judged its event from the text; the side that sent it.
    Judged(Direction),
    /// The checker cannot judge this event from its text: it is to be read in full.
    Refused,
}

fn judge_plainly(judge: &mut Judge, line: &[u8], out: &mut Vec<Violation>) -> Plain {
    let Some((from, at_ms, raw)) = plain_event_line(line) else {
        return Plain::Other;
    };
    match judge.observe_raw(from, at_ms, raw, out) {
        true => Plain::Judged(from),
        false => Plain::Refused,
    }
}

/// A bare event line judged from its text by a checker that can ([`Judge::observe_raw`]);
/// `false`: it is to be read in full.
fn judge_bare_plainly(
    judge: &mut Judge,
    side: Direction,
    line: &[u8],
    out: &mut Vec<Violation>,
) -> bool {
    simdutf8::basic::from_utf8(line).is_ok_and(|text| judge.observe_raw(side, 0, text, out))
}

/// `{"from":"client"|"server","at_ms":N,"event":EVENT}` exactly as wireprobe writes it (no
/// spaces, those keys in that order, nothing else): the side, the time and EVENT's text. EVENT
/// is whatever lies between `"event":` and the line's last `}`; a checker that accepts it has
/// read it as one whole JSON value, so the line was this shape. `None` for any other line.
fn plain_event_line(line: &[u8]) -> Option<(Direction, u64, &str)> {
    let (from, rest) = if let Some(rest) = line.strip_prefix(br#"{"from":"client","at_ms":"#) {
        (Direction::Client, rest)
    } else {
        (
            Direction::Server,
            line.strip_prefix(br#"{"from":"server","at_ms":"#)?,
        )
    };
    let digits = rest.iter().take_while(|b| b.is_ascii_digit()).count();
    // JSON has no leading zeros; u64 has no more than 20 digits.
    if digits == 0 || digits > 20 || (digits > 1 && rest[0] == b'0') {
        return None;
    }
    let at_ms: u64 = std::str::from_utf8(&rest[..digits]).ok()?.parse().ok()?;
    let event = rest[digits..]
        .strip_prefix(br#","event":"#)?
        .strip_suffix(b"}")?;
    Some((from, at_ms, simdutf8::basic::from_utf8(event).ok()?))
}

fn record(
    summary: &mut CheckSummary,
    line: u64,
    from: Direction,
    out: &mut Vec<Violation>,
    on_finding: &mut impl FnMut(&Finding),
) {
    for violation in out.drain(..) {
        *summary.per_rule.entry(violation.rule).or_default() += 1;
        let finding = Finding {
            line,
            from,
            violation,
        };
        on_finding(&finding);
        if summary.findings.len() < MAX_KEPT_FINDINGS {
            summary.findings.push(finding);
        }
    }
}

/// Judges one item of a captured answer (the server's) at the current line.
fn judge_server(
    judge: &mut Judge<'_>,
    summary: &mut CheckSummary,
    item: Observed<'_>,
    on_finding: &mut impl FnMut(&Finding),
) {
    let mut out = Vec::new();
    judge.observe(Direction::Server, 0, item, &mut out);
    let line = summary.lines;
    record(summary, line, Direction::Server, &mut out, on_finding);
}

/// Notes an input line that could not be read (the first [`MAX_KEPT_FINDINGS`] kept).
fn bad_line(summary: &mut CheckSummary, line: u64, reason: String) {
    summary.bad_line_count += 1;
    if summary.bad_lines.len() < MAX_KEPT_FINDINGS {
        summary.bad_lines.push(BadLine { line, reason });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_shape_wireprobe_writes_is_read_plainly() {
        let plain = |s: &str| plain_event_line(s.as_bytes()).map(|(f, t, e)| (f, t, e.to_owned()));
        assert_eq!(
            plain(r#"{"from":"server","at_ms":42,"event":{"type":"PING"}}"#),
            Some((Direction::Server, 42, r#"{"type":"PING"}"#.into()))
        );
        assert_eq!(
            plain(r#"{"from":"client","at_ms":0,"event":{}}"#),
            Some((Direction::Client, 0, "{}".into()))
        );
        for other in [
            r#"{"from": "server","at_ms":1,"event":{}}"#,
            r#"{"from":"server","event":{},"at_ms":1}"#,
            r#"{"from":"server","at_ms":01,"event":{}}"#,
            r#"{"from":"server","at_ms":-1,"event":{}}"#,
            r#"{"from":"server","at_ms":123456789012345678901,"event":{}}"#,
            r#"{"from":"server","at_ms":99999999999999999999,"event":{}}"#,
            r#"{"from":"server","at_ms":1,"frame":{}}"#,
            r#"{"from":"server","at_ms":1,"event":{}} "#,
            r#"{"from":"robot","at_ms":1,"event":{}}"#,
        ] {
            assert_eq!(plain(other), None, "{other}");
        }
        // What the checker must still refuse to read as one value comes out as text it will
        // not accept (the line has more than the event).
        let (_, _, rest) =
            plain_event_line(br#"{"from":"server","at_ms":1,"event":{},"sse":{"id":"1"}}"#)
                .expect("the prefix matches");
        assert!(serde_json::from_str::<Value>(rest).is_err(), "{rest}");
    }

    /// An event that is not UTF-8 (one byte off anywhere: in a string, a key, at either end)
    /// is never read plainly: the full path reads the line and says what it is.
    #[test]
    fn an_event_that_is_not_utf8_is_not_read_plainly() {
        let good =
            br#"{"from":"client","at_ms":1,"event":{"type":"PING","payload":{"nonce":"n\u00e9"}}}"#;
        assert!(plain_event_line(good).is_some());
        for at in br#"{"from":"client","at_ms":1,"event":"#.len()..good.len() - 1 {
            for bad in [0xff_u8, 0xc3, 0x80] {
                let mut line = good.to_vec();
                line[at] = bad;
                assert_eq!(plain_event_line(&line), None, "byte {at} set to {bad:#x}");
            }
        }
        // Valid text beyond ASCII is still read plainly: only broken UTF-8 is turned away.
        let accented =
            r#"{"from":"client","at_ms":1,"event":{"type":"PING","payload":{"nonce":"né😀"}}}"#;
        let (_, _, event) = plain_event_line(accented.as_bytes()).expect("valid UTF-8");
        assert!(event.contains("né😀"), "{event}");
    }

    /// Lines judged where they lie in the reader's buffer and lines copied out of it (a
    /// buffer too small to hold one) give the same findings.
    #[test]
    fn lines_in_the_buffer_and_lines_in_pieces_are_judged_alike() {
        let haip = crate::protocol::get("haip").expect("haip");
        let events = include_str!("../../corpus/haip/valid/gen-sequence.ndjson");
        let mut text = String::new();
        for (n, event) in events.lines().enumerate() {
            let from = if n % 2 == 0 { "client" } else { "server" };
            text.push_str(&format!(
                "{{\"from\":\"{from}\",\"at_ms\":{n},\"event\":{event}}}\n"
            ));
        }
        // A repeated line breaks the sequence: something to find.
        let first = text.lines().next().expect("a line").to_owned();
        text.push_str(&first);
        let summary = |capacity: usize| {
            let reader = std::io::BufReader::with_capacity(capacity, text.as_bytes());
            let s = check_stream(haip, reader, Capture::default(), |_| {}).expect("reads");
            let rules: Vec<_> = s
                .findings
                .iter()
                .map(|f| (f.line, f.violation.rule))
                .collect();
            (s.lines, s.events, rules)
        };
        let whole = summary(1 << 16);
        assert!(!whole.2.is_empty(), "{whole:?}");
        assert_eq!(summary(7), whole);
    }

    /// Bare events judged from their text find what reading each one in full finds.
    #[test]
    fn bare_lines_read_plainly_are_judged_as_in_full() {
        let haip = crate::protocol::get("haip").expect("haip");
        let mut text = include_str!("../../corpus/haip/valid/gen-sequence.ndjson").to_owned();
        for bad in [
            "gen-bad-uuid--HAIP-ENV-002",
            "gen-unknown-type--HAIP-ENV-006",
        ] {
            let path = format!(
                "{}/corpus/haip/invalid/{bad}.json",
                env!("CARGO_MANIFEST_DIR")
            );
            let event = std::fs::read_to_string(&path).expect("corpus file");
            let value: Value = serde_json::from_str(&event).expect("JSON");
            text.push_str(&format!("{value}\n"));
        }
        let first = text.lines().next().expect("a line").to_owned();
        text.push_str(&first);
        let plainly = check_stream(
            haip,
            text.as_bytes(),
            Capture {
                bare_from: Some(Direction::Server),
                cut: false,
            },
            |_| {},
        )
        .expect("reads");
        let plainly: Vec<_> = plainly
            .findings
            .iter()
            .map(|f| (f.line, f.violation.rule))
            .collect();
        let mut judge = Judge::new(haip);
        let mut in_full = Vec::new();
        for (n, line) in text.lines().enumerate() {
            let event: Value = serde_json::from_str(line).expect("JSON");
            let mut out = Vec::new();
            judge.observe(
                Direction::Server,
                0,
                Observed::Event((&event).into(), None),
                &mut out,
            );
            in_full.extend(out.iter().map(|v| (n as u64 + 1, v.rule)));
        }
        assert!(in_full.len() >= 2, "{in_full:?}");
        assert_eq!(plainly, in_full);
    }

    /// serde_json's `raw_value` feature reads an object whose key is its private token as the
    /// JSON text the key holds: a target could pass off a valid message it never sent. Built
    /// without it, that object is what it is, and judged as such in every form a line takes.
    #[test]
    fn an_object_is_not_read_as_the_json_a_string_in_it_holds() {
        let haip = crate::protocol::get("haip").expect("haip");
        let events = include_str!("../../corpus/haip/valid/gen-sequence.ndjson");
        let last = events.lines().last().expect("an event");
        let disguised = format!(
            "{{\"$serde_json::private::RawValue\":{}}}",
            Value::String(last.to_owned())
        );
        let read: Value = serde_json::from_str(&disguised).expect("JSON");
        assert_eq!(
            read.as_object()
                .map(|m| m.keys().map(String::as_str).collect::<Vec<_>>()),
            Some(vec!["$serde_json::private::RawValue"])
        );
        let body: String = events.lines().collect::<Vec<_>>().join("\n");
        let findings = |text: String, bare: Option<Direction>| {
            let s = check_stream(
                haip,
                text.as_bytes(),
                Capture {
                    bare_from: bare,
                    cut: false,
                },
                |_| {},
            )
            .expect("reads");
            s.findings.iter().map(|f| f.line).collect::<Vec<_>>()
        };
        let n = events.lines().count() as u64 + 1;
        // Each event sent by the client, then the disguised one by the server.
        let as_lines = |line: &dyn Fn(&str, &str) -> String| {
            let mut text: Vec<String> = events.lines().map(|e| line("client", e)).collect();
            text.push(line("server", &disguised));
            text.join("\n")
        };
        let plain = as_lines(&|from, e| format!(r#"{{"from":"{from}","at_ms":0,"event":{e}}}"#));
        let other = as_lines(&|from, e| format!(r#"{{"event":{e},"from":"{from}"}}"#));
        assert!(findings(plain, None).contains(&n));
        assert!(findings(other, None).contains(&n));
        let bare = format!("{body}\n{disguised}");
        assert!(findings(bare, Some(Direction::Server)).contains(&n));
    }
}
