//! Which session of the proxy an HTTP request belongs to, and what it is to that session.
//!
//! A WebSocket is one connection from start to end; HTTP bindings spread a session over many
//! requests, often over several TCP connections (a browser's stream on one, its POSTs on
//! others). How the requests group is the binding's: each POST alone with its streamed answer
//! (AG-UI's runs), the routes under one prefix together (HPD's stream and POSTs), or the
//! requests naming one Engine.IO `sid` (Socket.IO's long-polling and its upgrade). The
//! [`Book`] holds the sessions open, and ends a shared one once nothing of it has been in
//! flight for a while. It knows routes and Engine.IO's query, no protocol's events.

use super::body_tap::{Pumped, Reading};
use super::exchange::{Body, HttpAnswer, StreamFrom};
use super::length_prefixed::Splitter;
use super::relayed::{Peer, Relayed};
use super::socketio::packet::{parse_eio, EioPacket};
use super::socketio::server::packets_of;
use super::sse_server::route_of;
use super::sse_tap::SseTap;
use super::tap::TapSender;
use super::{query_param, Frame, Received};
use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::Mutex;

/// How the requests that are not WebSocket upgrades are judged.
#[derive(Clone, Debug, Default, PartialEq)]
pub enum Grouping {
    /// Forwarded, not judged (a binding with no HTTP routes).
    #[default]
    Untapped,
    /// Each POST is a session of its own, its body the client's item and its answer (an event
    /// stream, length-prefixed frames of a `framed` media type, or a plain body) the
    /// upstream's.
    EachPost { framed: Vec<String> },
    /// The requests to `stream` (a standing event stream, `GET`) and to `posts` under one
    /// prefix are one session.
    Routes { stream: String, posts: Vec<String> },
    /// Engine.IO: the polling requests and the upgrade naming one `sid` are one session, each
    /// packet of a polling body one item.
    EngineIo,
}

/// Which session a request joins.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Key {
    /// A session of its own.
    Alone,
    /// The session of this name (a route prefix, an Engine.IO `sid`).
    Shared(String),
    /// A session that the answer names (Engine.IO's handshake: its open packet has the sid).
    Opening,
}

/// What a request is to its session.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Kind {
    /// A POST: its body is the client's item, its answer the upstream's.
    Post,
    /// The event stream opened from here: its events are the upstream's items.
    Stream(StreamFrom),
    /// An Engine.IO polling POST: its packets are the client's items.
    PollSend,
    /// An Engine.IO polling GET: its answer's packets are the upstream's items.
    PollReceive,
}

/// One request the proxy judges.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Exchange {
    pub key: Key,
    /// The route as the binding names it (`/inputs`; `` for the upstream's own path).
    pub route: String,
    pub kind: Kind,
}

impl Grouping {
    /// What a request of `method` for `target` (the path and query it goes upstream with,
    /// `root` the upstream URL's own path) is, when it is judged at all; `from` is where a
    /// stream request resumes.
    pub fn exchange(
        &self,
        method: &hyper::Method,
        target: &str,
        root: &str,
        from: impl FnOnce() -> StreamFrom,
    ) -> Option<Exchange> {
        let (path, query) = target.split_once('?').unwrap_or((target, ""));
        let post = method == hyper::Method::POST;
        match self {
            Grouping::Untapped => None,
            Grouping::EachPost { .. } if post => {
                let route = path
                    .strip_prefix(root.trim_end_matches('/'))
                    .unwrap_or(path);
                Some(Exchange {
                    key: Key::Alone,
                    route: route.trim_end_matches('/').to_owned(),
                    kind: Kind::Post,
                })
            }
            Grouping::EachPost { .. } => None,
            Grouping::Routes { stream, posts } => {
                let (route, kind) = if method == hyper::Method::GET && path.ends_with(stream) {
                    (stream.as_str(), Kind::Stream(from()))
                } else if post {
                    (route_of(path, posts)?, Kind::Post)
                } else {
                    return None;
                };
                let prefix = &path[..path.len() - route.len()];
                Some(Exchange {
                    key: Key::Shared(prefix.to_owned()),
                    route: route.to_owned(),
                    kind,
                })
            }
            Grouping::EngineIo => {
                if query_param(query, "transport") != Some("polling") {
                    return None;
                }
                let sid = query_param(query, "sid");
                let (key, kind) = match (sid, post) {
                    (Some(sid), true) => (Key::Shared(sid.to_owned()), Kind::PollSend),
                    (Some(sid), false) => (Key::Shared(sid.to_owned()), Kind::PollReceive),
                    (None, false) => (Key::Opening, Kind::PollReceive),
                    (None, true) => return None,
                };
                Some(Exchange {
                    key,
                    route: path.to_owned(),
                    kind,
                })
            }
        }
    }

    /// Which session a WebSocket upgrade for `target` joins: an Engine.IO upgrade the
    /// session of its `sid`, any other one of its own.
    pub fn upgrade_key(&self, target: &str) -> Key {
        let query = target.split_once('?').map_or("", |(_, q)| q);
        match (self, query_param(query, "sid")) {
            (Grouping::EngineIo, Some(sid)) => Key::Shared(sid.to_owned()),
            _ => Key::Alone,
        }
    }

    /// The media types whose bodies are length-prefixed frames.
    pub fn framed(&self) -> &[String] {
        match self {
            Grouping::EachPost { framed } => framed,
            _ => &[],
        }
    }
}

/// A session a request holds open until it has been answered.
#[derive(Debug)]
pub struct Held {
    pub conn: usize,
    /// The session's name in the book (`None`: a session of its own).
    name: Option<String>,
}

/// A shared session: how many requests hold it, and a count of joins, so an idle timer
/// started before the latest join knows it is stale.
struct Entry {
    conn: usize,
    in_flight: usize,
    joins: u64,
}

/// The sessions of one proxy, numbered from 1 in the order they open.
pub struct Book {
    tap: TapSender<Relayed>,
    /// How long a shared session stays open with nothing in flight.
    idle: Duration,
    next: AtomicUsize,
    shared: Mutex<HashMap<String, Entry>>,
}

impl Book {
    pub fn new(tap: TapSender<Relayed>, idle: Duration) -> Arc<Book> {
        Arc::new(Book {
            tap,
            idle,
            next: AtomicUsize::new(1),
            shared: Mutex::new(HashMap::new()),
        })
    }

    /// Where the relay hands what it sees.
    pub fn tap(&self) -> &TapSender<Relayed> {
        &self.tap
    }

    /// Holds the session `key` names open, opening it (a client at `peer` asking for `url`)
    /// if it is not.
    pub async fn join(&self, key: &Key, peer: Option<SocketAddr>, url: &str) -> Held {
        let name = match key {
            Key::Alone => {
                let conn = self.open(peer, url).await;
                return Held { conn, name: None };
            }
            Key::Shared(name) => Some(name.clone()),
            Key::Opening => None,
        };
        // Held across the announcement, so no item of the session can be handed over
        // before the judge knows the session.
        let mut shared = self.shared.lock().await;
        if let Some(entry) = name.as_ref().and_then(|n| shared.get_mut(n)) {
            entry.in_flight += 1;
            entry.joins += 1;
            return Held {
                conn: entry.conn,
                name,
            };
        }
        let conn = self.open(peer, url).await;
        // A session the answer names is held under a name no request can give until then.
        let name = name.unwrap_or_else(|| format!("\u{0}opening {conn}"));
        shared.insert(
            name.clone(),
            Entry {
                conn,
                in_flight: 1,
                joins: 1,
            },
        );
        Held {
            conn,
            name: Some(name),
        }
    }

    async fn open(&self, peer: Option<SocketAddr>, url: &str) -> usize {
        let conn = self.next.fetch_add(1, Ordering::Relaxed);
        let target = url.to_owned();
        self.tap
            .send(Relayed::Opened { conn, peer, target }, 0)
            .await;
        conn
    }

    /// Names the session `held` opened (Engine.IO's sid, read from the handshake's answer),
    /// so the requests naming it join it.
    pub async fn name(&self, held: &mut Held, name: &str) {
        let Some(old) = held.name.take() else {
            return;
        };
        let mut shared = self.shared.lock().await;
        if let Some(entry) = shared.remove(&old) {
            shared.insert(name.to_owned(), entry);
        }
        held.name = Some(name.to_owned());
    }

    /// Lets go of `held`: a session of its own ends now, a shared one once nothing has been
    /// in flight for the idle time.
    pub async fn leave(self: &Arc<Self>, held: Held) {
        let Some(name) = held.name else {
            self.tap.send(Relayed::Ended { conn: held.conn }, 0).await;
            return;
        };
        let joins = {
            let mut shared = self.shared.lock().await;
            let Some(entry) = shared.get_mut(&name) else {
                return;
            };
            entry.in_flight = entry.in_flight.saturating_sub(1);
            if entry.in_flight > 0 {
                return;
            }
            entry.joins
        };
        let book = self.clone();
        tokio::spawn(async move {
            tokio::time::sleep(book.idle).await;
            let mut shared = book.shared.lock().await;
            let idle = shared
                .get(&name)
                .is_some_and(|e| e.in_flight == 0 && e.joins == joins);
            if !idle {
                return;
            }
            if let Some(entry) = shared.remove(&name) {
                drop(shared);
                book.tap.send(Relayed::Ended { conn: entry.conn }, 0).await;
            }
        });
    }
}

/// The request headers a binding's judge reads (content negotiation), as the client sent them.
pub fn judged_headers(headers: &hyper::HeaderMap) -> Vec<(String, String)> {
    [hyper::header::ACCEPT, hyper::header::CONTENT_TYPE]
        .iter()
        .filter_map(|name| {
            let value = headers.get(name)?;
            Some((
                name.as_str().to_owned(),
                String::from_utf8_lossy(value.as_bytes()).into_owned(),
            ))
        })
        .collect()
}

/// What the client's request hands the judge before it goes upstream: its body (read up to
/// `max` bytes, `whole` when it ended within them) as a POST or as polling packets, or the
/// stream it opened.
pub fn client_items(
    exchange: &Exchange,
    body: &[u8],
    whole: bool,
    max: usize,
    headers: Vec<(String, String)>,
) -> Vec<Received> {
    let route = &exchange.route;
    if !whole && matches!(exchange.kind, Kind::Post | Kind::PollSend) {
        let what = format!("a request body to {route:?} over {max} bytes: forwarded, not judged");
        return vec![Received::Notice(what)];
    }
    match &exchange.kind {
        Kind::Post => vec![Received::Posted {
            path: route.clone(),
            body: Body::of_bytes(body),
            status: None,
            answered_as: None,
            headers,
        }],
        Kind::Stream(from) => vec![Received::StreamOpened(from.clone())],
        Kind::PollSend => packets_of(body).into_iter().map(Received::Frame).collect(),
        Kind::PollReceive => Vec::new(),
    }
}

/// How the upstream's answer to one judged request is read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AnswerShape {
    /// A POST answered with an event stream (`frames`: with length-prefixed frames): its head
    /// at once, its items as they come, its end.
    StreamedPost { frames: bool },
    /// A POST answered with a body: the answer whole, at its end.
    Post,
    /// The standing event stream: its events as they come, its end.
    Stream,
    /// A request answered with something the binding does not read (an event stream
    /// refused, a polling POST's `ok`).
    Unread { noticed: bool },
    /// A polling GET: the packets of its body, at its end.
    Polled,
}

impl AnswerShape {
    /// How the answer `head` to a request of `kind` is read; `framed`: the media types of
    /// length-prefixed frames.
    pub fn of(kind: &Kind, head: &HttpAnswer, framed: &[String]) -> AnswerShape {
        let ok = (200..300).contains(&head.status);
        let events = super::sse::is_media_type(&head.content_type, "text/event-stream");
        let frames = framed
            .iter()
            .any(|m| super::sse::is_media_type(&head.content_type, m));
        match kind {
            Kind::Post if events || frames => AnswerShape::StreamedPost { frames },
            Kind::Post => AnswerShape::Post,
            Kind::Stream(_) if ok && events => AnswerShape::Stream,
            Kind::PollReceive if ok => AnswerShape::Polled,
            Kind::PollSend if ok => AnswerShape::Unread { noticed: false },
            Kind::Stream(_) | Kind::PollReceive | Kind::PollSend => {
                AnswerShape::Unread { noticed: true }
            }
        }
    }

    /// What the judge gets when the answer's head arrives.
    pub fn at_head(&self, head: &HttpAnswer) -> Option<Received> {
        match self {
            AnswerShape::StreamedPost { .. } => Some(Received::Http(head.clone())),
            AnswerShape::Unread { noticed: true } => Some(Received::Notice(format!(
                "{} {} answered HTTP {} ({}): forwarded, not read",
                head.method,
                head.path,
                head.status,
                crate::show::quoted_or_none(Some(head.content_type.as_str())),
            ))),
            _ => None,
        }
    }

    /// How a copy of the body is read, lines and bodies kept up to `max` bytes.
    pub fn reading(&self, max: usize) -> Reading {
        match self {
            AnswerShape::StreamedPost { frames: true } => Reading::Frames(Splitter::new(max)),
            AnswerShape::StreamedPost { frames: false } | AnswerShape::Stream => {
                Reading::Events(SseTap::new(max))
            }
            AnswerShape::Post | AnswerShape::Polled => Reading::Copy { max },
            AnswerShape::Unread { .. } => Reading::Copy { max: 0 },
        }
    }

    /// The sid an Engine.IO handshake's answer (`pumped`) opened its session with.
    pub fn opened_sid(&self, pumped: &Pumped) -> Option<String> {
        if *self != AnswerShape::Polled || pumped.cut {
            return None;
        }
        let first = packets_of(&pumped.copy).into_iter().next()?;
        match first {
            Frame::Text(text) => match parse_eio(&text) {
                Ok(EioPacket::Open(info)) => Some(info.sid),
                _ => None,
            },
            _ => None,
        }
    }

    /// What the judge gets when the answer has ended (`head` its head, `pumped` how it
    /// ended), and from which side.
    pub fn at_end(&self, mut head: HttpAnswer, pumped: Pumped) -> Vec<(Peer, Received)> {
        if pumped.abandoned {
            let why = format!("the client left before the answer to {} ended", head.path);
            return vec![(Peer::Client, Received::Notice(why))];
        }
        let cut = |head: &HttpAnswer| {
            Received::Notice(format!(
                "the answer to {} {} is over the frame limit: forwarded, judged without it",
                head.method, head.path
            ))
        };
        let mut out = Vec::new();
        match self {
            AnswerShape::StreamedPost { .. } | AnswerShape::Stream => {
                let ended = Received::AnswerEnded {
                    path: head.path,
                    error: pumped.error,
                };
                return vec![(Peer::Upstream, ended)];
            }
            AnswerShape::Post if pumped.cut => out.push(cut(&head)),
            AnswerShape::Post => {}
            AnswerShape::Polled if pumped.cut => return vec![(Peer::Upstream, cut(&head))],
            AnswerShape::Polled => {
                return packets_of(&pumped.copy)
                    .into_iter()
                    .map(|p| (Peer::Upstream, Received::Frame(p)))
                    .collect()
            }
            AnswerShape::Unread { .. } => return Vec::new(),
        }
        if !pumped.cut {
            head.body = Body::of_bytes(&pumped.copy);
        }
        out.insert(0, Received::Http(head));
        if let Some(error) = pumped.error {
            out.push(Received::Notice(error));
        }
        out.into_iter().map(|r| (Peer::Upstream, r)).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hyper::Method;

    fn live() -> StreamFrom {
        StreamFrom::Live
    }

    #[test]
    fn hpd_routes_share_a_session_per_prefix() {
        let g = Grouping::Routes {
            stream: "/events/live".into(),
            posts: vec!["/inputs".into(), "/responses".into()],
        };
        let stream = g
            .exchange(&Method::GET, "/s/1/events/live?after=3", "/", || {
                StreamFrom::After("3".into())
            })
            .expect("judged");
        assert_eq!(stream.key, Key::Shared("/s/1".into()));
        assert_eq!(stream.kind, Kind::Stream(StreamFrom::After("3".into())));
        let post = g
            .exchange(&Method::POST, "/s/1/inputs", "/", live)
            .expect("judged");
        assert_eq!((post.key, post.route.as_str()), (stream.key, "/inputs"));
        assert!(g.exchange(&Method::GET, "/health", "/", live).is_none());
        assert!(g.exchange(&Method::GET, "/s/1/inputs", "/", live).is_none());
    }

    #[test]
    fn each_post_is_alone_and_named_under_the_upstream_path() {
        let g = Grouping::EachPost { framed: vec![] };
        let e = g
            .exchange(&Method::POST, "/agent", "/agent", live)
            .expect("judged");
        assert_eq!((e.key, e.route.as_str()), (Key::Alone, ""));
        let e = g
            .exchange(&Method::POST, "/agent/other", "/agent", live)
            .expect("judged");
        assert_eq!(e.route, "/other");
        assert!(g.exchange(&Method::GET, "/agent", "/agent", live).is_none());
    }

    #[test]
    fn engine_io_requests_group_by_sid_and_the_handshake_opens() {
        let g = Grouping::EngineIo;
        let hs = g
            .exchange(
                &Method::GET,
                "/socket.io/?EIO=4&transport=polling",
                "/",
                live,
            )
            .expect("judged");
        assert_eq!((hs.key, hs.kind), (Key::Opening, Kind::PollReceive));
        let send = g
            .exchange(
                &Method::POST,
                "/socket.io/?EIO=4&transport=polling&sid=ab",
                "/",
                live,
            )
            .expect("judged");
        assert_eq!(
            (send.key, send.kind),
            (Key::Shared("ab".into()), Kind::PollSend)
        );
        assert_eq!(
            g.upgrade_key("/socket.io/?EIO=4&transport=websocket&sid=ab"),
            Key::Shared("ab".into())
        );
        assert_eq!(
            g.upgrade_key("/socket.io/?EIO=4&transport=websocket"),
            Key::Alone
        );
        assert!(g
            .exchange(
                &Method::GET,
                "/socket.io/?EIO=4&transport=websocket",
                "/",
                live
            )
            .is_none());
    }
}
