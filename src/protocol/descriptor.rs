//! What a protocol is, as data: one [`Descriptor`] per profile, written once in the profile's
//! module and read by the CLI, the runner, the reports and the tests through [`Protocol`].
//! A profile's code is only what differs in behaviour (sessions, checkers, what it
//! recognises); every constant fact lives here.

use super::{HttpRoutes, Protocol, TokenPlacement, TransportKind};
use crate::rules::Rule;

/// The constant facts of one protocol.
#[derive(Debug)]
pub struct Descriptor {
    /// The short id used on the command line (`haip`).
    pub id: &'static str,
    /// Human name with version (`HAIP v1.1.2`).
    pub title: &'static str,
    /// The spec file every rule cites (under `../shared/specs/`).
    pub spec_file: &'static str,
    /// The rule catalogue.
    pub rules: &'static [Rule],
    /// Every transport the protocol's targets speak, the one a run uses unless told otherwise
    /// first (a run without `--transport` covers each).
    pub transports: &'static [TransportKind],
    /// The parts a target can play (`--role`), the default first; empty when it plays one.
    pub roles: &'static [&'static str],
    /// Where bearer tokens go unless a case says otherwise.
    pub token_placement: TokenPlacement,
    /// The suite compiled into the binary: `(file name, TOML text)`.
    pub suite: &'static [(&'static str, &'static str)],
    /// The suite that judges a client (`run --client`), compiled in likewise; empty while the
    /// protocol has none.
    pub client_suite: &'static [(&'static str, &'static str)],
    /// `suites/ID/ERRATA.md`, compiled in: the readings of the spec where it is ambiguous
    /// or silent, which `wireprobe explain` quotes beside the rules they name.
    pub errata: &'static str,
    /// The routes of the SSE + HTTP binding, for protocols that have one.
    pub http_routes: Option<HttpRoutes>,
    /// False when a connection is ready as soon as it opens (no handshake to send or wait for).
    pub has_handshake: bool,
    /// True when the target speaks first on a fresh connection or process (Nuum's init): a
    /// target that has said nothing of the protocol within the step timeout is mute.
    pub target_speaks_first: bool,
    /// True when a target is one conversation every client shares (a hosted agent): cases
    /// then run one at a time, or they would see each other's events.
    pub one_conversation: bool,
    /// The rules an answer to broken input cannot keep, because they tie an answer to the
    /// input it answers: a refusal of a call without a trace id names no call's trace, an
    /// error may go out on the channel the broken message named. One answer per broken input
    /// is excused them; every other rule judges it as any item.
    pub broken_input_excuses: &'static [&'static str],
}

/// A protocol's bundled suite for its [`Descriptor`]: `bundled_suite!("haip", ["a.toml",
/// ...])` compiles `suites/haip/a.toml`, ... into the binary, in the order given.
#[macro_export]
macro_rules! bundled_suite {
    ($protocol:literal, [$($file:literal),+ $(,)?]) => {
        &[$((
            $file,
            include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/suites/", $protocol, "/", $file)),
        )),+]
    };
}

/// A protocol's `suites/ID/ERRATA.md` for its [`Descriptor`], compiled into the binary.
#[macro_export]
macro_rules! bundled_errata {
    ($protocol:literal) => {
        include_str!(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/suites/",
            $protocol,
            "/ERRATA.md"
        ))
    };
}

/// The descriptor's facts, read off any profile. They are methods of `dyn Protocol`, not of
/// the trait, so no profile can answer them differently from its descriptor.
impl dyn Protocol {
    pub fn id(&self) -> &'static str {
        self.descriptor().id
    }

    pub fn title(&self) -> &'static str {
        self.descriptor().title
    }

    pub fn spec_file(&self) -> &'static str {
        self.descriptor().spec_file
    }

    pub fn rules(&self) -> &'static [Rule] {
        self.descriptor().rules
    }

    /// The transport a run uses unless told otherwise.
    pub fn transport(&self) -> TransportKind {
        // Every descriptor names at least one transport (a test in this module holds them to it).
        self.descriptor()
            .transports
            .first()
            .copied()
            .unwrap_or(TransportKind::WebSocket)
    }

    pub fn transports(&self) -> &'static [TransportKind] {
        self.descriptor().transports
    }

    pub fn roles(&self) -> &'static [&'static str] {
        self.descriptor().roles
    }

    pub fn token_placement(&self) -> TokenPlacement {
        self.descriptor().token_placement
    }

    pub fn bundled_suite(&self) -> &'static [(&'static str, &'static str)] {
        self.descriptor().suite
    }

    pub fn errata(&self) -> &'static str {
        self.descriptor().errata
    }

    pub fn http_routes(&self) -> Option<HttpRoutes> {
        self.descriptor().http_routes
    }

    pub fn has_handshake(&self) -> bool {
        self.descriptor().has_handshake
    }

    pub fn target_speaks_first(&self) -> bool {
        self.descriptor().target_speaks_first
    }

    pub fn one_conversation(&self) -> bool {
        self.descriptor().one_conversation
    }

    pub fn broken_input_excuses(&self) -> &'static [&'static str] {
        self.descriptor().broken_input_excuses
    }
}

#[cfg(test)]
mod tests {
    use crate::protocol;

    #[test]
    fn every_descriptor_is_whole_and_its_id_unique() {
        let mut ids = std::collections::BTreeSet::new();
        for p in protocol::all() {
            let d = p.descriptor();
            assert!(ids.insert(d.id), "two protocols are called {}", d.id);
            assert!(!d.transports.is_empty(), "{} names no transport", d.id);
            assert!(!d.suite.is_empty(), "{} bundles no suite", d.id);
            assert!(!d.rules.is_empty(), "{} has no rules", d.id);
            for excused in d.broken_input_excuses {
                assert!(
                    crate::rules::find(d.rules, excused).is_some(),
                    "{} excuses {excused}, which is not one of its rules",
                    d.id
                );
            }
        }
    }
}
