//! The exchange over HTTP (HTTP + Server-Sent Events; HTTP + Protobuf; Run Input › Error
//! Handling; Processing Model › Outgoing material): what wireprobe POSTed, as the schema reads
//! it, and the answer's head — a run answered 200 with the encoding the request admits, a
//! malformed input refused before any run, one with members the schema does not describe
//! served, a newer minor version served.

use super::conversation::{version, Answer, Conversation, Input, Standing};
use super::schema::{schema, Flaw};
use super::PROTO_MEDIA_TYPE;
use crate::rules::ids::{
    AGUI_HTTP_001, AGUI_HTTP_002, AGUI_HTTP_003, AGUI_IN_001, AGUI_IN_002, AGUI_IN_003,
    AGUI_IN_004, AGUI_VER_002,
};
use crate::rules::Violation;
use crate::transport::HttpAnswer;
use serde_json::Value;

/// Most exchanges POSTed and not answered yet that the checker keeps.
const MAX_QUEUED: usize = 1024;

/// A POST with `headers`, read (`None`: its body was not JSON): an exchange whose answer comes
/// after the answers of the POSTs before it.
pub fn posted(conv: &mut Conversation, read: Option<Input>, headers: &[(String, String)]) {
    if conv.queued.len() >= MAX_QUEUED {
        return;
    }
    let input = read.unwrap_or_else(malformed);
    let proto_admitted = headers
        .iter()
        .filter(|(name, _)| name.eq_ignore_ascii_case("accept"))
        .any(|(_, value)| admits_proto(value));
    queue(conv, input, proto_admitted);
}

/// wireprobe POSTed a body as exact bytes (a fuzzed input, recorded as what it was rather
/// than as a POST): `json` is the JSON it held, `None` when it was not JSON.
pub fn posted_raw(conv: &mut Conversation, json: Option<&Value>) {
    if conv.queued.len() >= MAX_QUEUED {
        return;
    }
    let input = json.map_or_else(malformed, |v| read_input(v).0);
    queue(conv, input, false);
}

/// An input that is not JSON.
fn malformed() -> Input {
    Input {
        standing: Standing::Malformed,
        state: Value::Object(Default::default()),
        ..Input::default()
    }
}

/// Queues the exchange of `input` for its answer.
fn queue(conv: &mut Conversation, input: Input, proto_admitted: bool) {
    conv.queued.push_back(Answer {
        input,
        proto_admitted,
        status: None,
        streamed: false,
        proto: false,
        runs: Vec::new(),
        requested: None,
        broken_judged: false,
    });
}

/// An event came with no exchange to answer (a captured stream, a proxy that joined late):
/// the stream is judged as the answer to an input not known — what the input decides (the
/// thread, the requested run, the client's tools, the state) is not judged against it.
pub fn captured(conv: &mut Conversation) {
    if conv.answer.is_some() || !conv.queued.is_empty() {
        return;
    }
    conv.answer = Some(Answer {
        input: Input::default(),
        proto_admitted: false,
        status: None,
        streamed: true,
        proto: false,
        runs: Vec::new(),
        requested: None,
        broken_judged: false,
    });
    conv.state = None;
}

/// The answer to the oldest exchange not answered yet begins: it becomes the one judged.
fn begin(conv: &mut Conversation) -> bool {
    let Some(next) = conv.queued.pop_front() else {
        return false;
    };
    let same_thread = next.input.thread_id.is_some()
        && conv
            .answer
            .as_ref()
            .and_then(|a| a.input.thread_id.as_ref())
            == next.input.thread_id.as_ref();
    if !same_thread {
        // Another thread: nothing of the last one carries over (but what went unjudged, and
        // what was exercised and not drained yet).
        let queued = std::mem::take(&mut conv.queued);
        let unjudged = std::mem::take(&mut conv.unjudged);
        let exercised = std::mem::take(&mut conv.exercised);
        *conv = Conversation {
            queued,
            unjudged,
            exercised,
            ..Default::default()
        };
    }
    conv.state = Some(next.input.state.clone());
    for (id, role) in &next.input.messages {
        conv.message(id, super::conversation::MessageKind::Input(role.clone()));
    }
    // A new stream starts with nothing open (what the last one left is its truncation).
    super::streams::abandon_open(conv);
    conv.run = None;
    conv.stream_events = 0;
    conv.stream_thread = None;
    conv.answer = Some(next);
    true
}

/// True when an `Accept` value admits the protobuf media type with a positive quality (a
/// wildcard range admits it too).
pub fn admits_proto(accept: &str) -> bool {
    crate::transport::accept::admits(accept, PROTO_MEDIA_TYPE)
}

/// The input as the schema reads it (its ids, state, frontend tools and standing) and the
/// schema's flaws in it: one reading, the most of the work, which both judges take — the
/// agent's (this module) and the client's (`consumer`).
pub fn read_input(value: &Value) -> (Input, Vec<Flaw>) {
    let flaws = schema().input_flaws(value);
    let standing = if flaws.iter().any(|f| matches!(f, Flaw::Malformed { .. })) {
        Standing::Malformed
    } else if flaws.iter().any(|f| matches!(f, Flaw::Null { .. })) {
        Standing::NullsOnly
    } else {
        Standing::Valid
    };
    let text = |k: &str| value.get(k).and_then(Value::as_str).map(str::to_owned);
    let frontend = value
        .get("tools")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|t| t.get("name").and_then(Value::as_str).map(str::to_owned))
        .collect();
    let messages = value
        .get("messages")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|m| {
            let id = m.get("id")?.as_str()?.to_owned();
            let role = m.get("role")?.as_str()?.to_owned();
            Some((id, role))
        })
        .collect();
    let input = Input {
        thread_id: text("threadId"),
        run_id: text("runId"),
        version: text("protocolVersion"),
        state: value
            .get("state")
            .filter(|s| !s.is_null())
            .cloned()
            .unwrap_or_else(|| Value::Object(Default::default())),
        frontend,
        messages,
        standing,
        novel: flaws
            .iter()
            .any(|f| matches!(f, Flaw::Unknown { .. } | Flaw::Unrecognised { .. })),
    };
    (input, flaws)
}

/// The head of the answer to wireprobe's POST.
pub fn answered(conv: &mut Conversation, answer: &HttpAnswer, out: &mut Vec<Violation>) {
    if !begin(conv) {
        return;
    }
    let Some(exchange) = conv.answer.as_mut() else {
        return;
    };
    let media = answer
        .content_type
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase();
    let sse = media == "text/event-stream";
    let proto = media == PROTO_MEDIA_TYPE;
    exchange.status = Some(answer.status);
    exchange.streamed = sse || proto;
    exchange.proto = proto;
    let input = &exchange.input;
    let newer_minor = input
        .version
        .as_deref()
        .and_then(version)
        .is_some_and(|(major, minor)| major == 1 && minor > 1);
    // Which input rules this answer is judged by, refused or served: each applies to an
    // input of its kind, whatever the status turns out to be.
    let ex = &mut conv.exercised;
    match input.standing {
        Standing::Malformed => {
            ex.hit(AGUI_IN_001);
            ex.hit(AGUI_IN_003);
        }
        Standing::Valid if input.novel => ex.hit(AGUI_IN_002),
        Standing::Valid if !newer_minor => ex.hit(AGUI_IN_004),
        Standing::Valid | Standing::NullsOnly => {}
    }
    if input.standing == Standing::Valid && newer_minor {
        ex.hit(AGUI_VER_002);
    }
    if answer.status >= 400 {
        if input.standing == Standing::Valid && input.novel {
            out.push(Violation::new(
                AGUI_IN_002,
                format!("{}: an input whose only departure is material this version does not describe (members it does not name, a union member such as a message role it does not know) is served, not refused", answer.describe()),
            ));
        }
        if input.standing == Standing::Valid && newer_minor {
            out.push(Violation::new(
                AGUI_VER_002,
                format!("{}: an input declaring protocolVersion {:?}, a newer minor of line 1, is refused", answer.describe(), input.version.as_deref().unwrap_or("")),
            ));
        }
        // A server error for an input the schema takes whole: the error path is for input
        // rejected before the run (what the two rules above and a refused credential cover).
        if answer.status == 500 && input.standing == Standing::Valid && !input.novel && !newer_minor
        {
            out.push(Violation::new(
                AGUI_IN_004,
                format!("{}: an input the schema takes whole, nothing in it malformed or unknown, is answered with a server error, not a run", answer.describe()),
            ));
        }
        return;
    }
    if input.standing == Standing::Malformed {
        out.push(Violation::new(
            AGUI_IN_003,
            format!("{} to a malformed input: rejected input is answered with an HTTP error status and no event stream", answer.describe()),
        ));
        return;
    }
    if input.standing == Standing::NullsOnly {
        return;
    }
    // A run served for a valid input: its head is judged for the encoding (SSE, where the
    // request's Accept does not admit protobuf; a protobuf answer's exact media type) and,
    // below, the status.
    if proto {
        ex.hit(AGUI_HTTP_003);
    }
    if !exchange.proto_admitted {
        ex.hit(AGUI_HTTP_001);
    }
    if proto && answer.content_type.trim() != PROTO_MEDIA_TYPE {
        out.push(Violation::new(
            AGUI_HTTP_003,
            format!(
                "the protobuf answer's Content-Type is {:?}, not exactly {PROTO_MEDIA_TYPE}",
                answer.content_type
            ),
        ));
    }
    if !(sse || proto && exchange.proto_admitted) {
        out.push(Violation::new(
            AGUI_HTTP_001,
            format!(
                "{} with Content-Type {}: a request whose Accept does not admit {} is answered with text/event-stream",
                answer.describe(),
                crate::show::quoted_or_none(Some(answer.content_type.as_str()).filter(|c| !c.is_empty())),
                if proto { "protobuf" } else { "another encoding" }
            ),
        ));
        return;
    }
    ex.hit(AGUI_HTTP_002);
    if answer.status != 200 {
        out.push(Violation::new(
            AGUI_HTTP_002,
            format!(
                "{}: a run that starts is answered with 200",
                answer.describe()
            ),
        ));
    }
}

/// An event of an answer to broken input: only the rules about broken input judge it.
pub fn broken_answer(conv: &mut Conversation, event: &Value, out: &mut Vec<Violation>) {
    let Some(exchange) = conv.answer.as_mut() else {
        return;
    };
    let first = conv.stream_events == 0;
    conv.stream_events = conv.stream_events.saturating_add(1);
    if exchange.input.standing != Standing::Malformed || exchange.broken_judged {
        return;
    }
    let ty = event.get("type").and_then(Value::as_str).unwrap_or("");
    // The answer to a malformed input streams: its opening event is judged (a run must not be).
    conv.exercised.hit(AGUI_IN_001);
    if ty == "RUN_STARTED" {
        out.push(Violation::new(
            AGUI_IN_001,
            "a malformed input is answered with a run (RUN_STARTED): it is refused before any run starts",
        ));
    }
    if ty == "RUN_STARTED" || ty == "RUN_ERROR" || !first {
        exchange.broken_judged = true;
    }
}
