//! Everything the reference target sends goes through the outbox: sequence numbers, the
//! replay log, the client's accept_events, credit and pauses, and the envelope faults.

use super::Config;
use crate::protocol::haip::facts::{Facts, HaiFacts};
use crate::protocol::haip::model::{self, HAIP_VERSION};
use crate::protocol::haip::session::now_ms;
use crate::transport::Frame;
use serde_json::{json, Map, Value};
use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::{Arc, Mutex};

/// One message sent earlier, kept for replay.
#[derive(Debug, Clone)]
struct Logged {
    seq: u64,
    frames: Vec<Frame>,
}

/// Session state that survives reconnects.
#[derive(Debug, Default)]
pub struct SessionState {
    /// The seq our next message gets.
    pub next_seq: u64,
    /// The client seq we expect next.
    pub expected_client_seq: u64,
    /// Every run_id seen in this session (run ids are unique per session).
    pub run_ids: HashSet<String>,
    log: VecDeque<Logged>,
}

impl SessionState {
    /// Highest seq sent so far.
    pub fn last_sent(&self) -> Option<u64> {
        self.log.back().map(|l| l.seq)
    }

    /// Lowest seq still kept for replay.
    pub fn oldest_kept(&self) -> Option<u64> {
        self.log.front().map(|l| l.seq)
    }
}

pub type SharedState = Arc<Mutex<SessionState>>;

/// Sessions by id. The mutexes are never held across an await.
#[derive(Debug, Clone, Default)]
pub struct SessionStore(Arc<Mutex<Sessions>>);

/// The sessions kept, and their ids oldest first.
#[derive(Debug, Default)]
struct Sessions {
    by_id: HashMap<String, SharedState>,
    oldest_first: VecDeque<String>,
}

/// Sessions kept before the oldest are forgotten (a reference target, not a database). The
/// oldest go one by one: forgetting them all at once would refuse the resume of a session
/// made a moment before, well inside the spec's five minutes. A session's replay log is some
/// 30 KB after a fuzz run, so 10,000 of them grew a long campaign's builtin target past 300 MB,
/// and memory never reused cost every later message fresh pages (4% of fuzzing's CPU). A
/// thousand still keep a session for its whole run at fuzzing's rate (the fuzzer only ever
/// resumes sessions a target never had), and for minutes at a suite's.
const MAX_SESSIONS: usize = 1_000;

impl SessionStore {
    pub fn get(&self, id: &str) -> Option<SharedState> {
        self.0.lock().ok()?.by_id.get(id).cloned()
    }

    /// A fresh session under `id`, replacing any earlier one.
    pub fn create(&self, id: &str, config: &Config) -> SharedState {
        let state = fresh_state(config);
        self.register(id, state.clone());
        state
    }

    /// Files `state` under `id`, replacing any earlier session of that id.
    pub fn register(&self, id: &str, state: SharedState) {
        let Ok(mut sessions) = self.0.lock() else {
            return;
        };
        if sessions.by_id.insert(id.to_owned(), state).is_none() {
            sessions.oldest_first.push_back(id.to_owned());
        }
        while sessions.by_id.len() > MAX_SESSIONS {
            let Some(oldest) = sessions.oldest_first.pop_front() else {
                break;
            };
            sessions.by_id.remove(&oldest);
        }
    }
}

/// A session state not registered anywhere (for errors before a handshake).
pub fn fresh_state(config: &Config) -> SharedState {
    let first = if config.faults.has("seq-starts-at-0") {
        0
    } else {
        1
    };
    Arc::new(Mutex::new(SessionState {
        next_seq: first,
        expected_client_seq: 1,
        ..SessionState::default()
    }))
}

/// An envelope as the reference writes it, its fields in the order it always wrote them.
#[derive(serde::Serialize)]
struct Wire<'a> {
    id: &'a str,
    session: &'a str,
    seq: Seq,
    #[serde(skip_serializing_if = "Option::is_none")]
    ack: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    ts: Option<String>,
    channel: &'a str,
    #[serde(rename = "type")]
    ty: &'a str,
    payload: &'a Value,
    pv: u16,
    #[serde(skip_serializing_if = "Option::is_none")]
    run_id: Option<&'a str>,
    #[serde(flatten)]
    extra: &'a Map<String, Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    x_debug: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    bin_len: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    bin_mime: Option<&'a str>,
}

/// `seq` as the spec writes it, or as a number (the `numeric-seq` fault).
#[derive(serde::Serialize)]
#[serde(untagged)]
enum Seq {
    Text(String),
    Number(u64),
}

/// An event the target wants to send.
#[derive(Debug, Clone)]
pub struct Outgoing {
    pub ty: String,
    pub channel: String,
    pub payload: Value,
    pub run_id: Option<String>,
    /// Binary two-frame mode: the bytes after the envelope (the envelope gets bin_len).
    pub binary: Option<(Vec<u8>, String)>,
    /// Further envelope fields (faults use this to add what the spec forbids).
    pub envelope_extra: Map<String, Value>,
    /// Carries the cumulative `ack` (faults leave it out, as the public server does).
    pub acknowledges: bool,
}

impl Outgoing {
    pub fn new(ty: &str, channel: &str, payload: Value) -> Self {
        Outgoing {
            ty: ty.to_owned(),
            channel: channel.to_owned(),
            payload,
            run_id: None,
            binary: None,
            envelope_extra: Map::new(),
            acknowledges: true,
        }
    }

    pub fn in_run(mut self, run_id: Option<&str>) -> Self {
        self.run_id = run_id.map(str::to_owned);
        self
    }
}

#[derive(Debug, Clone, Copy)]
struct Credit {
    messages: Option<i64>,
    bytes: Option<i64>,
}

/// What the client announced in its HAI (read the same way the checker reads it).
pub type ClientPrefs = HaiFacts;

/// The client's announcements from its HAI event.
pub fn client_prefs(hai: &Value) -> ClientPrefs {
    Facts::from_value(hai)
        .and_then(|f| f.hai)
        .unwrap_or_default()
}

/// The sending side of one connection.
pub struct Outbox {
    config: Arc<Config>,
    session_id: String,
    pub state: SharedState,
    pub client: ClientPrefs,
    credit: HashMap<String, Credit>,
    paused: HashSet<String>,
    held: VecDeque<Outgoing>,
}

impl Outbox {
    pub fn new(
        config: Arc<Config>,
        session_id: String,
        state: SharedState,
        client: ClientPrefs,
    ) -> Self {
        Outbox {
            config,
            session_id,
            state,
            client,
            credit: HashMap::new(),
            paused: HashSet::new(),
            held: VecDeque::new(),
        }
    }

    /// Sends under session `id` from now on (a server that greeted before it knew the
    /// client's session takes the client's).
    pub fn adopt_session(&mut self, id: &str, client: ClientPrefs) {
        self.session_id = id.to_owned();
        self.client = client;
    }

    pub fn queue(&mut self, mut o: Outgoing) {
        if self.config.faults.has("bad-channel") {
            o.channel.push_str(" OUT");
        }
        self.held.push_back(o);
    }

    /// More credit from the client's FLOW_UPDATE.
    pub fn grant(&mut self, channel: &str, messages: Option<i64>, bytes: Option<i64>) {
        let c = self.credit_of(channel);
        if let (Some(m), Some(add)) = (c.messages.as_mut(), messages) {
            *m = m.saturating_add(add);
        }
        if let (Some(b), Some(add)) = (c.bytes.as_mut(), bytes) {
            *b = b.saturating_add(add);
        }
    }

    pub fn pause(&mut self, channel: &str) {
        self.paused.insert(channel.to_owned());
    }

    pub fn resume(&mut self, channel: &str) {
        self.paused.remove(channel);
    }

    fn credit_of(&mut self, channel: &str) -> &mut Credit {
        let (m, b) = (self.client.credit_messages, self.client.credit_bytes);
        self.credit.entry(channel.to_owned()).or_insert(Credit {
            messages: m.map(|v| v.min(i64::MAX as u64) as i64),
            bytes: b.map(|v| v.min(i64::MAX as u64) as i64),
        })
    }

    /// Pops every held message that may go now and returns its frames, in order.
    pub fn ready(&mut self) -> Vec<Frame> {
        let faults = self.config.faults.clone();
        let mut frames = Vec::new();
        let mut blocked: HashSet<String> = HashSet::new();
        let mut kept = VecDeque::new();
        while let Some(o) = self.held.pop_front() {
            // Types outside the catalogue only exist under the unknown-event-type fault, whose
            // point is that they get sent.
            let accepted = o.ty == "HAI"
                || !model::EVENT_TYPES.contains(&o.ty.as_str())
                || faults.has("ignores-accept-events")
                || self
                    .client
                    .accept_events
                    .as_ref()
                    .is_none_or(|a| a.contains(&o.ty));
            if !accepted {
                continue;
            }
            if model::consumes_credit(&o.ty) {
                let bytes = o.binary.as_ref().map_or(0, |(b, _)| b.len() as i64);
                let paused = self.paused.contains(&o.channel) && !faults.has("ignores-pause");
                let ignore_credit = faults.has("ignores-client-credit");
                let c = *self.credit_of(&o.channel);
                let short = !ignore_credit
                    && (c.messages.is_some_and(|m| m < 1) || c.bytes.is_some_and(|b| b < bytes));
                if blocked.contains(&o.channel) || paused || short {
                    blocked.insert(o.channel.clone());
                    kept.push_back(o);
                    continue;
                }
                let c = self.credit_of(&o.channel);
                if let Some(m) = c.messages.as_mut() {
                    *m -= 1;
                }
                if let Some(b) = c.bytes.as_mut() {
                    *b -= bytes;
                }
            }
            frames.extend(self.seal(o));
        }
        self.held = kept;
        frames
    }

    /// Numbers, logs and encodes one message.
    fn seal(&mut self, o: Outgoing) -> Vec<Frame> {
        let faults = &self.config.faults;
        let Ok(mut state) = self.state.lock() else {
            return Vec::new();
        };
        let seq = state.next_seq;
        state.next_seq += if faults.has("seq-skips") { 2 } else { 1 };
        let mut ack = state.expected_client_seq.saturating_sub(1);
        if faults.has("ack-beyond") {
            ack += 5;
        }
        if faults.has("stale-ack") {
            ack = ack.min(1);
        }
        let id = if faults.has("bad-uuid") {
            format!("msg-{seq}")
        } else {
            self.config.fresh_id()
        };
        let (mut bytes, mime) = match o.binary {
            Some((bytes, mime)) => (Some(bytes), Some(mime)),
            None => (None, None),
        };
        let bin_len = bytes.as_ref().map(Vec::len);
        if faults.has("binary-len-mismatch") {
            if let Some(b) = bytes.as_mut() {
                b.pop();
            }
        }
        let wire = Wire {
            id: &id,
            session: &self.session_id,
            seq: match faults.has("numeric-seq") {
                true => Seq::Number(seq),
                false => Seq::Text(seq.to_string()),
            },
            ack: (ack > 0 && o.acknowledges).then(|| ack.to_string()),
            ts: (!faults.has("no-timestamp")).then(|| now_ms().to_string()),
            channel: &o.channel,
            ty: &o.ty,
            payload: &o.payload,
            pv: if faults.has("bad-pv") { 300 } else { 1 },
            run_id: o.run_id.as_deref(),
            extra: &o.envelope_extra,
            x_debug: faults.has("extra-envelope-field").then_some(true),
            bin_len,
            bin_mime: mime.as_deref(),
        };
        // Written straight from the fields: building a JSON object first (a hashed map) cost
        // fuzzing against the reference 4–7% of its CPU.
        let text = serde_json::to_string(&wire).unwrap_or_default();
        let mut frames = Vec::with_capacity(2);
        frames.push(Frame::Text(text));
        if let Some(bytes) = bytes {
            frames.push(Frame::Binary(bytes));
        }
        state.log.push_back(Logged {
            seq,
            frames: frames.clone(),
        });
        while state.log.len() > self.config.replay_window {
            state.log.pop_front();
        }
        frames
    }

    /// The frames of messages `from..=to` for a replay, or `Err` when `from` is no longer kept.
    pub fn replay(&self, from: u64, to: u64) -> Result<Vec<Frame>, ()> {
        let state = self.state.lock().map_err(|_| ())?;
        match (state.oldest_kept(), state.last_sent()) {
            (_, Some(last)) if from > last => Ok(Vec::new()),
            (Some(oldest), _) if from >= oldest => Ok(state
                .log
                .iter()
                .filter(|l| l.seq >= from && l.seq <= to)
                .flat_map(|l| l.frames.iter().cloned())
                .collect()),
            (None, None) => Ok(Vec::new()),
            _ => Err(()),
        }
    }
}

/// The reference target's HAI payload.
pub fn hai_payload(config: &Config) -> Value {
    let mut payload = json!({
        "haip_version": if config.faults.has("bad-version-string") { "1.1" } else { HAIP_VERSION },
        "accept_major": [1],
        "accept_events": model::EVENT_TYPES,
        "capabilities": {
            "binary_frames": true,
            "max_concurrent_runs": config.max_concurrent_runs,
            "flow_control": {
                "initial_credit_messages": config.initial_credit_messages,
                "initial_credit_bytes": config.initial_credit_bytes,
            }
        }
    });
    if config.faults.has("hai-missing-accept-events") {
        if let Some(p) = payload.as_object_mut() {
            p.remove("accept_events");
        }
    }
    payload
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn past_the_bound_the_oldest_session_alone_is_forgotten() {
        let store = SessionStore::default();
        let state = || Arc::new(Mutex::new(SessionState::default()));
        for n in 0..=MAX_SESSIONS {
            store.register(&format!("s{n}"), state());
        }
        // Registering one again keeps one entry for it.
        store.register("s1", state());
        assert!(store.get("s0").is_none(), "the oldest goes");
        assert!(store.get("s1").is_some(), "the next one stays");
        assert!(
            store.get(&format!("s{MAX_SESSIONS}")).is_some(),
            "the newest stays"
        );
        let sessions = store.0.lock().expect("not poisoned");
        assert_eq!(sessions.by_id.len(), MAX_SESSIONS);
        assert_eq!(sessions.oldest_first.len(), MAX_SESSIONS);
    }
}
