//! What a protocol gives the fuzzer ([`FuzzProfile`]: valid event strategies, its mutators
//! and its client-side validator), the mutations every protocol shares ([`mutate`]), and
//! deterministic generation from a seed ([`gen`]). It sits below the protocols, which each
//! implement [`FuzzProfile`], and knows none of them; the engine that runs campaigns is
//! `crate::fuzz_profile`, above them.

pub mod gen;
pub mod keeps;
pub mod mutate;

use proptest::strategy::{BoxedStrategy, Strategy};
use serde_json::Value;

/// Something wireprobe sends: an event its encoder frames, or bytes no encoder would produce.
#[derive(Debug, Clone, PartialEq)]
pub enum Input {
    Event(Value),
    /// Exact bytes of one frame (one NDJSON line, one WebSocket text frame, one emit argument).
    Raw(Vec<u8>),
}

/// What the spec requires of the target when it receives an input.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Answer {
    /// Take it: no error.
    Accept,
    /// Answer with the protocol's error event (with this code, when the spec names one).
    Error(Option<&'static str>),
    /// The spec names no answer: the target must only stay alive and keep serving.
    Survive,
    /// The spec leaves even the connection's fate open (a malformed transport packet): the
    /// fuzzer records what happens and reconnects before going on.
    Unspecified,
    /// A valid event whose answer depends on the sequence around it: out of order (a gap, a
    /// duplicate), or the start of a scenario (a turn interrupted, a burst aborted). The
    /// profile's [`FuzzProfile::oracles`] say what the target owes.
    Sequence,
}

/// What the target owes after an [`Answer::Sequence`] input, and what to send on the way, in
/// order.
#[derive(Debug, Clone, PartialEq)]
pub enum Oracle {
    /// Send this event (through the session, as a valid event is; `"${NAME}"` is a value an
    /// earlier reply captured).
    Send(Value),
    /// Nothing matching any of `matching` arrives (or waits) for `ms`; with `answer`, the
    /// silence is the target's answer to the event just sent, and lasts a round trip longer
    /// (see the suite's `Silence::answer`); without, it keeps its length (a timer
    /// ends it, or it counts from an arrival, not a send).
    Silence {
        matching: Vec<Value>,
        ms: u64,
        rule: &'static str,
        answer: bool,
    },
    /// A message matching one of `patterns` arrives within the step timeout (`"$capture:NAME"`
    /// binds a value a later [`Oracle::Send`] uses as `"${NAME}"`). A `scenario` reply is a
    /// directive obeyed: without it the run ends as skipped ("scenario not reached"), since a
    /// target need not know the directives.
    Reply {
        patterns: Vec<Value>,
        rule: &'static str,
        scenario: bool,
    },
    /// As a [`Oracle::Reply`], unless one of `refused` arrives first: the target refused a
    /// message the reply answers for what our own sends cannot know (HAIP: credit it counts
    /// another way than we do, or a long run spent), or, for a scenario, ended what the reply
    /// needed still going (a tool call done before any update), so what the message was owed
    /// cannot be judged and the run ends as not reached at once. Whether refusing it was right
    /// is the frame rules' to judge (HAIP-ERR-004).
    ReplyUnlessRefused {
        patterns: Vec<Value>,
        rule: &'static str,
        scenario: bool,
        refused: Vec<Value>,
    },
    /// Wait until every answer owed to earlier input has arrived (the profile's
    /// [`FuzzProfile::sync`]), keeping what came for the next oracles to judge.
    Sync,
    /// The session cannot go on as it is: go on from a new connection (or process).
    Restart,
    /// Free what flow control holds back of the target's output (credit the run opened with
    /// little of, a channel the sequence paused), so a scenario's answer is not held up.
    Unblock,
    /// Reconnect and resume the same session, with these fields over the session's own
    /// handshake (`"${NAME}"` is a value an earlier reply captured).
    Resume(Value),
}

impl Answer {
    /// How reports and `gen` name it.
    pub fn describe(&self) -> String {
        match self {
            Answer::Accept => "accept".into(),
            Answer::Error(None) => "error".into(),
            Answer::Error(Some(code)) => format!("error {code}"),
            Answer::Survive => "survive".into(),
            Answer::Unspecified => "unspecified".into(),
            Answer::Sequence => "sequence".into(),
        }
    }
}

/// A named way to break one rule with an otherwise valid event.
#[derive(Clone, Copy)]
pub struct Mutator {
    pub name: &'static str,
    /// The rule the mutated input breaks.
    pub breaks: &'static str,
    /// What the target must answer.
    pub answer: Answer,
    /// Mutates a valid event; `None` when it does not apply to this one.
    pub apply: fn(&Value, &mut Rng) -> Option<Input>,
}

/// A [`Mutator`] whose input is a valid event with [`Answer::Sequence`]: what the target owes
/// comes from the profile's [`FuzzProfile::oracles`].
#[macro_export]
macro_rules! sequence_mutator {
    ($name:literal, $breaks:expr, $apply:expr) => {
        $crate::fuzz_profile::Mutator {
            name: $name,
            breaks: $breaks,
            answer: $crate::fuzz_profile::Answer::Sequence,
            apply: $apply,
        }
    };
}

impl std::fmt::Debug for Mutator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Mutator({} breaks {})", self.name, self.breaks)
    }
}

/// How a run opens its session.
#[derive(Debug, Clone, PartialEq)]
pub enum Opening {
    /// The session's own handshake, with these fields over it (`None`: as it is) — a client
    /// that declares less (fewer accepted events, less credit, no binary frames) sees flows a
    /// default client never does.
    Handshake(Option<Value>),
    /// A handshake the target must refuse with an error (with `code` when the spec names one)
    /// and, when `closes`, by ending the connection; judged under `rule`. The run then goes on
    /// from a new connection with the session's own handshake.
    Refused {
        with: Value,
        code: Option<&'static str>,
        closes: bool,
        rule: &'static str,
    },
    /// A connection presenting a bad token, which the target must refuse (judged under
    /// `rule`), before the run goes on from a new connection with a valid one. Only when the
    /// run has credentials (the target requires tokens), and for a token that needs minting
    /// (`needs_secret`: expired, not yet valid) only with `--jwt-secret`.
    Unauthorized {
        token: crate::auth::TokenKind,
        needs_secret: bool,
        rule: &'static str,
    },
}

/// What a protocol gives the fuzzer.
pub trait FuzzProfile: Send + Sync {
    /// How runs open (default: always the session's own handshake).
    fn openings(&self) -> BoxedStrategy<Opening> {
        proptest::strategy::Just(Opening::Handshake(None)).boxed()
    }

    /// Spec-valid client events, as a sequence whose ids and counters are consistent.
    fn valid_sequence(&self, len: std::ops::RangeInclusive<usize>) -> BoxedStrategy<Vec<Value>>;
    /// The protocol's mutators (shared ones bound to its rules, and its own).
    fn mutators(&self) -> &'static [Mutator];
    /// The rules a client input breaks, by the protocol's own validator (empty: valid).
    fn input_violations(&self, input: &Input) -> Vec<&'static str>;

    /// A message that shows the target still serves, what answers it (a pattern), and the rule
    /// an unanswered probe after an adversarial input breaks. `None` for the answer: the probe
    /// is answered by silence (no error, no disconnect) for a short while.
    fn probe(&self) -> Probe;

    /// What opens a run before its first probe, past the handshake, when the other side's
    /// input starts the exchange (an AG-UI client POSTs its first run): the wait for that input,
    /// with what it binds, and the start of the answer. Default: nothing.
    fn preamble(&self) -> Vec<Oracle> {
        Vec::new()
    }

    /// Sent once a probe is answered, before the run goes on, when the probe ends the exchange
    /// it joins (an AG-UI probe finishes the run with a call, and its answer is the client's
    /// next run, whose stream opens with RUN_STARTED). Default: nothing.
    fn after_probe(&self) -> Vec<Value> {
        Vec::new()
    }

    /// How many things (a message, a call, a step) the valid `event` opens, less those it
    /// closes. A probe owed after a mutation goes where the run's sum is 0, so its events
    /// never land inside an open one (an AG-UI run must not finish with a message open).
    /// Default 0: the probe follows each mutation at once.
    fn opened_by(&self, event: &Value) -> i64 {
        let _ = event;
        0
    }

    /// True when a probe follows valid events too, wherever it fits (see
    /// [`FuzzProfile::opened_by`]), judged under the probe's `answered_by`: a target that stops
    /// on valid input (a client failing a run the spec makes valid) is then named by that rule
    /// and shrunk to the events that did it, never blamed on a mutation that came after them.
    /// Default false: a probe follows mutations only.
    fn probes_valid_input(&self) -> bool {
        false
    }

    /// The rule an unanswered probe breaks after `mutator`'s input, when it is not the
    /// probe's own (a client's keeps-working rules differ by what it must survive: an unknown
    /// event type, an SSE field). Default: the probe's.
    fn probe_rule(&self, mutator: &Mutator) -> Option<&'static str> {
        let _ = mutator;
        None
    }

    /// The rule a missing or wrong answer to `mutator`'s input breaks (default: the one the
    /// input breaks).
    fn answer_rule(&self, mutator: &Mutator) -> &'static str {
        mutator.breaks
    }

    /// True when the spec lets the target answer this valid event with an error (HUMA: a
    /// tool-result for a call it never issued). The fuzzer lets such an answer arrive and
    /// forgets it before it sends a mutated input, so it is taken for neither that input's
    /// answer nor a broken probe.
    fn answer_open(&self, event: &Value) -> bool {
        let _ = event;
        false
    }

    /// True when what this valid event means depends on whether the target is still working
    /// on earlier input (a Nuum user line starts a turn of its own when the agent is idle, and
    /// is injected into the turn that runs otherwise; an interrupt cancels a turn, or meets
    /// none). The fuzzer lets the target settle before such an event when earlier input may
    /// have set work going, so a run means the same alone, loaded or replayed; a scenario that
    /// wants it sent mid-way says so itself.
    fn waits_for_idle(&self, event: &Value) -> bool {
        let _ = event;
        false
    }

    /// A message whose answer is its own (`tag` makes it unique within a run): once it is
    /// answered, every earlier input has been answered too. `None`: the protocol has none.
    fn sync(&self, tag: u64) -> Option<SyncPoint> {
        let _ = tag;
        None
    }

    /// The longest a settle waits, in ms, for a protocol without a sync message (see
    /// [`FuzzProfile::sync`]), besides the round trip its connection measured: it ends sooner
    /// once the session can tell the target settled. `step_ms` is the run's step timeout.
    /// Default 200; a profile whose session tells, and whose target may owe a backlog it
    /// works through one at a time (a UAE executor, an HPD agent's queued turns), waits longer.
    fn settle_ms(&self, step_ms: u64) -> u64 {
        let _ = step_ms;
        200
    }

    /// The target's answer to the sync message says it read what came before, not that the
    /// work that started has ended (a HAIP run goes on past the PONG): a run then ends with a
    /// settle after its sync too, so the events of that work are judged.
    fn work_outlasts_sync(&self) -> bool {
        false
    }

    /// The probe is an input the target takes in turn, behind what it is still working on (an
    /// HPD agent's queued turns): each probe then waits first for the target to settle, so a
    /// backlog longer than the step timeout is not taken for a target that stopped serving.
    fn probe_queues(&self) -> bool {
        false
    }

    /// How often `mutator` is drawn, relative to the others (default: all alike). A mutator
    /// whose oracle waits on the spec's own timers can be drawn less, so runs spend their time
    /// fuzzing rather than waiting.
    fn weight(&self, mutator: &Mutator) -> usize {
        let _ = mutator;
        1
    }

    /// What the target owes after `input`, made by `mutator` with [`Answer::Sequence`].
    fn oracles(&self, mutator: &Mutator, input: &Input) -> Vec<Oracle> {
        let _ = (mutator, input);
        Vec::new()
    }

    /// The rule an error with another code than the one `mutator` names breaks, when it is not
    /// [`FuzzProfile::answer_rule`] (a spec may demand the error at MUST and its code at SHOULD).
    fn code_rule(&self, mutator: &Mutator) -> Option<&'static str> {
        let _ = mutator;
        None
    }

    /// What to send live for a generated event: `sent` (a mutation of `original`, or
    /// `original` itself) with the fields the session fills (ids, counters) left to it, unless
    /// the mutation changed them. `None`: not sent live (a handshake the session does itself).
    fn live_event(&self, original: &Value, sent: &Value) -> Option<Value> {
        let _ = original;
        Some(sent.clone())
    }

    /// [`FuzzProfile::live_event`] of a valid event sent as generated (`sent` is `original`),
    /// made from the event itself rather than a copy.
    fn live_valid(&self, event: Value) -> Option<Value> {
        self.live_event(&event, &event)
    }

    /// The rules of the side this profile judges that no live campaign of it exercises, each
    /// with why (a timer longer than a run, a transport it does not speak, a rule of the role
    /// the target does not play): a campaign's coverage names them apart from the rules it
    /// could have reached and did not. Default: none.
    fn out_of_reach(&self) -> &'static [(&'static str, &'static str)] {
        &[]
    }
    /// The exact frame bytes for raw input (a Socket.IO profile wraps them in an emit).
    fn raw_frame(&self, bytes: &[u8]) -> Vec<u8> {
        bytes.to_vec()
    }
}

/// The JSON value an input carries: the event, or raw bytes that parse as JSON; `None` when
/// the bytes are not JSON at all (what each protocol calls malformed input).
pub fn input_json(input: &Input) -> Option<std::borrow::Cow<'_, Value>> {
    match input {
        Input::Event(e) => Some(std::borrow::Cow::Borrowed(e)),
        Input::Raw(bytes) => serde_json::from_slice(bytes)
            .ok()
            .map(std::borrow::Cow::Owned),
    }
}

/// A message and the pattern of the answer only it gets (see [`FuzzProfile::sync`]).
#[derive(Debug, Clone)]
pub struct SyncPoint {
    pub send: Value,
    pub answer: Value,
    /// The rule an unanswered sync message breaks.
    pub rule: &'static str,
}

/// A liveness probe (see [`FuzzProfile::probe`]).
#[derive(Debug, Clone)]
pub struct Probe {
    /// Sent in order; the answer is awaited after the last. (More than one lets a profile
    /// cover readings the spec leaves open, e.g. whether a rejected message used its number.)
    pub sends: Vec<Value>,
    /// What answers it (any one of these); empty: silence (no error, no disconnect) answers it.
    pub answers: Vec<Value>,
    /// What an error looks like, for silence probes.
    pub error: Value,
    /// The rule broken when the probe goes unanswered after an adversarial input: the target
    /// stopped serving.
    pub rule: &'static str,
    /// The rule that makes the target answer the probe at all, judged by one probe before the
    /// sequence (so a target that never answers is not blamed for the sequence).
    pub answered_by: &'static str,
    /// The rule broken when the target ends (connection or process) after an adversarial
    /// input where the spec wants it to stay; `None`: the answer's own rule judges that.
    pub ended: Option<&'static str>,
    /// True when the target answers the probe only in a test mode the spec leaves to it (a
    /// Web UI that submits each view it is shown): unanswered before the sequence, the run is
    /// skipped as not reached, not failed.
    pub scenario: bool,
}

/// `"${uuid:probe}"` in a probe's messages and answers: each probe of a run gets an id of its
/// own (a client may rightly ignore a request id it has answered before).
pub const PROBE_ID: &str = "${uuid:probe}";

/// What starts every probe uuid: `"${uuid:probe}"`, and others a probe needs besides
/// (`"${uuid:probe-message}"`), each numbered per probe as [`PROBE_ID`] is.
pub const PROBE_UUIDS: &str = "${uuid:probe";

/// A small deterministic generator (SplitMix64): mutations are reproducible from a seed
/// without proptest's machinery, so a shrunk case replays bit for bit.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A number in `0..n` (`n` > 0).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n.max(1) as u64) as usize
    }

    /// One of `items` (not empty).
    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}
