//! This machine running out of ports to connect from, which is ours to wait out and never the
//! target's doing.
//!
//! A connection whose end this side closes first keeps its local port for a minute afterwards
//! (TIME_WAIT). A campaign that opens and closes connections to one address faster than the
//! ephemeral range (28,232 ports by Linux's default) lasts that minute finds none free:
//! `connect` fails with EADDRNOTAVAIL. HTTP + SSE runs close their own connections (the event
//! stream never ends by itself), so fuzzing an HPD target in another container or on another
//! host runs out past about 470 connections a second; with the range narrowed to 2,000 ports,
//! 72–87% of a campaign's runs ended as "could not complete", each naming the target
//! unreachable, while it said "nothing found". Loopback is spared (Linux reuses such
//! ports there), so the tests never see it. Ports come free as fast as they were taken a minute
//! before, so a short wait mostly finds one; when none came free for longer than a connect's
//! timeout (the first minute's ports all taken, none back yet), a case's opening connect tries
//! again for up to [`LONGEST_DROUGHT`] outside the case's budget. `scripts/local-ports.sh`
//! narrows the range to run out within seconds: a campaign that lost 3,490 of 4,000 runs with
//! 2,000 ports loses 3, each a POST mid-run.

use super::TransportError;
use std::time::{Duration, Instant};

/// The first pause before trying again, doubled each time up to [`LONGEST_PAUSE`].
const FIRST_PAUSE: Duration = Duration::from_millis(5);
const LONGEST_PAUSE: Duration = Duration::from_millis(100);

/// True when `error`, or anything it was caused by, says no local address (port) was free to
/// connect from.
pub fn ran_out(error: &(dyn std::error::Error + 'static)) -> bool {
    let mut cause = Some(error);
    while let Some(e) = cause {
        if e.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::AddrNotAvailable)
        {
            return true;
        }
        cause = e.source();
    }
    false
}

/// What [`retrying`] ended with.
pub enum Tried<T, E> {
    /// The attempt's own outcome: it succeeded, or failed for another reason.
    Done(Result<T, E>),
    /// Every attempt until the deadline found no local port free; how long that took.
    RanOut(Duration),
}

/// Runs `attempt` (one connection opened, or a request whose connection is), and again while
/// it fails for want of a local port, pausing longer each time, until trying once more would
/// pass `deadline`: what ran out is then said before the caller's own timeout fires there.
pub async fn retrying<T, E, F, Fut>(deadline: Instant, mut attempt: F) -> Tried<T, E>
where
    E: std::error::Error + 'static,
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Result<T, E>>,
{
    let began = Instant::now();
    let mut pause = FIRST_PAUSE;
    loop {
        match attempt().await {
            Err(e) if ran_out(&e) => {
                if Instant::now() + pause >= deadline {
                    return Tried::RanOut(began.elapsed());
                }
                tokio::time::sleep(pause).await;
                pause = (pause * 2).min(LONGEST_PAUSE);
            }
            done => return Tried::Done(done),
        }
    }
}

/// The longest a port this side closed stays taken (Linux's TIME_WAIT, which no setting
/// changes): a wait for a port past this is a wait for something else.
pub const LONGEST_DROUGHT: Duration = Duration::from_secs(60);

/// The error of a connection to `target` that found no local port in `waited`, saying why in
/// words a user can act on.
pub fn error(target: String, waited: Duration) -> TransportError {
    TransportError::NoLocalPort {
        target,
        reason: format!(
            "no local port was free to connect from for {} ms (connections this machine closed \
             keep theirs for a minute): fewer --jobs, or a wider net.ipv4.ip_local_port_range",
            waited.as_millis()
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Error, ErrorKind};

    /// An error that wraps another, as reqwest's and hyper's do.
    #[derive(Debug, thiserror::Error)]
    #[error("error sending request")]
    struct Wrapped(#[source] Error);

    #[test]
    fn no_free_port_is_told_apart_at_any_depth() {
        assert!(ran_out(&Error::from(ErrorKind::AddrNotAvailable)));
        assert!(ran_out(&Wrapped(Error::from(ErrorKind::AddrNotAvailable))));
        assert!(!ran_out(&Wrapped(Error::from(
            ErrorKind::ConnectionRefused
        ))));
        assert!(!ran_out(&Error::other("Cannot assign requested address")));
    }

    #[tokio::test]
    async fn an_attempt_runs_again_while_no_port_is_free_and_no_longer() {
        let deadline = Instant::now() + Duration::from_secs(5);
        let mut tries = 0;
        let tried = retrying(deadline, || {
            tries += 1;
            let outcome = match tries {
                1..=3 => Err(Error::from(ErrorKind::AddrNotAvailable)),
                _ => Ok(tries),
            };
            async move { outcome }
        })
        .await;
        assert!(matches!(tried, Tried::Done(Ok(4))));

        // Another failure is the attempt's own: not tried again.
        let mut tries = 0;
        let tried = retrying(deadline, || {
            tries += 1;
            async { Err::<(), _>(Error::from(ErrorKind::ConnectionRefused)) }
        })
        .await;
        assert!(matches!(tried, Tried::Done(Err(_))));
        assert_eq!(tries, 1);
    }

    #[tokio::test]
    async fn a_port_never_free_ends_before_the_deadline() {
        let began = Instant::now();
        let deadline = began + Duration::from_millis(300);
        let tried = retrying(deadline, || async {
            Err::<(), _>(Error::from(ErrorKind::AddrNotAvailable))
        })
        .await;
        let Tried::RanOut(waited) = tried else {
            panic!("a port never free is said so");
        };
        assert!(Instant::now() < deadline, "it stops before the deadline");
        assert!(
            waited >= Duration::from_millis(100),
            "it waited: {waited:?}"
        );
        assert!(error("http://a/".into(), waited)
            .to_string()
            .contains("--jobs"));
    }
}
