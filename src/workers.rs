//! Worker threads for a campaign's runs, one per core, each with a single-threaded async
//! runtime of its own.
//!
//! A run, and every task it starts (its connection's read-and-write task, a server it opens for
//! a client, the pipes of a process it spawns), stays on the thread that began it; so does a
//! target a worker starts for its own runs ([`LocalTarget`]: the builtin reference). Runs then
//! never wait on another core's scheduler: on tokio's work-stealing runtime every message of a
//! run woke tasks that other cores could steal, and a fuzzed HAIP event cost 25–30% more CPU
//! than here, an HPD input 30% more (`scripts/bench-fuzz.sh`; `docs/speed.md`).
//!
//! [`Workers::shutdown`] tells every thread to stop and waits, for a bounded time, until each
//! has dropped its target and its runtime (whatever was still under way there is cancelled,
//! so a run's child process is killed as its task is dropped). Dropping [`Workers`] only tells
//! them to stop.

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use tokio::runtime::Handle;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

/// What keeps a worker's own target running: dropped when the worker stops.
pub type TargetGuard = Box<dyn Send>;

/// The future a [`LocalTarget`] returns: the URL the worker's runs reach its target at, and
/// what keeps the target up.
pub type TargetStarting =
    Pin<Box<dyn Future<Output = Result<(String, TargetGuard), String>> + Send>>;

/// Starts, on each worker thread, a target of that worker's own (the builtin reference), so
/// that a run's client and the target's side of its connection share a thread.
#[derive(Clone)]
pub struct LocalTarget(Arc<dyn Fn() -> TargetStarting + Send + Sync>);

impl LocalTarget {
    pub fn new(start: impl Fn() -> TargetStarting + Send + Sync + 'static) -> Self {
        LocalTarget(Arc::new(start))
    }
}

impl std::fmt::Debug for LocalTarget {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("LocalTarget")
    }
}

/// Why the workers could not start.
#[derive(Debug, thiserror::Error)]
pub enum WorkersError {
    #[error("cannot start a worker thread: {0}")]
    Thread(std::io::Error),
    #[error("cannot start a worker thread's async runtime: {0}")]
    Runtime(std::io::Error),
    #[error("the copy of the target a worker thread starts for its runs did not start: {0}")]
    Target(String),
    #[error("a worker thread ended before it was ready (a wireprobe bug: please report it): {0}")]
    Ended(String),
}

/// How long [`Workers::shutdown`] waits for the threads to end, as the CLI waits for its own
/// runtime's tasks.
const SHUTDOWN: std::time::Duration = std::time::Duration::from_secs(2);

/// One thread and what it holds.
struct Worker {
    handle: Handle,
    /// Where its runs reach its own target, when it started one.
    target_url: Option<String>,
    /// Runs under way on it (the next run goes to the worker with the fewest).
    runs: Arc<AtomicUsize>,
    /// Dropped (or sent) to stop the thread.
    stop: oneshot::Sender<()>,
    /// Closed once the thread has dropped its runtime.
    ended: oneshot::Receiver<()>,
}

/// The worker threads of a campaign.
pub struct Workers {
    workers: Vec<Worker>,
}

/// How many workers a campaign gets: one per core this process may use.
pub fn per_core() -> usize {
    std::thread::available_parallelism().map_or(1, usize::from)
}

impl Workers {
    /// Starts `count` worker threads (at least one), each with its own target when `target` is
    /// given, and returns once every one is ready.
    pub async fn start(count: usize, target: Option<&LocalTarget>) -> Result<Self, WorkersError> {
        let mut workers = Vec::with_capacity(count.max(1));
        for i in 0..count.max(1) {
            workers.push(Self::start_one(i, target.cloned()).await?);
        }
        Ok(Workers { workers })
    }

    async fn start_one(i: usize, target: Option<LocalTarget>) -> Result<Worker, WorkersError> {
        let (ready_tx, ready_rx) = oneshot::channel();
        let (stop_tx, stop_rx) = oneshot::channel::<()>();
        let (ended_tx, ended_rx) = oneshot::channel::<()>();
        std::thread::Builder::new()
            .name(format!("wireprobe-worker-{i}"))
            .spawn(move || {
                serve(target, ready_tx, stop_rx);
                drop(ended_tx);
            })
            .map_err(WorkersError::Thread)?;
        let (handle, target_url) = ready_rx
            .await
            .map_err(|_| WorkersError::Ended("its thread ended without a word".into()))??;
        Ok(Worker {
            handle,
            target_url,
            runs: Arc::default(),
            stop: stop_tx,
            ended: ended_rx,
        })
    }

    /// Tells every thread to stop and waits until each has ended (at most two seconds: a
    /// thread still waiting on a blocking lookup is left to end on its own).
    pub async fn shutdown(self) {
        let ended: Vec<_> = self
            .workers
            .into_iter()
            .map(|w| {
                drop(w.stop);
                w.ended
            })
            .collect();
        let _ = tokio::time::timeout(SHUTDOWN, futures_util::future::join_all(ended)).await;
    }

    /// How many worker threads there are.
    pub fn len(&self) -> usize {
        self.workers.len()
    }

    /// Always false: there is at least one worker.
    pub fn is_empty(&self) -> bool {
        self.workers.is_empty()
    }

    /// Where worker `index`'s runs reach its own target, when it started one.
    pub fn target_url(&self, index: usize) -> Option<&str> {
        self.workers.get(index)?.target_url.as_deref()
    }

    /// Runs the future `make` builds on the worker with the fewest runs under way; `make` is
    /// given that worker's index. A panic in the future is the handle's error, as with
    /// `tokio::spawn`.
    pub fn spawn<F>(&self, make: impl FnOnce(usize) -> F) -> JoinHandle<F::Output>
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        let (index, worker) = self
            .workers
            .iter()
            .enumerate()
            .min_by_key(|(_, w)| w.runs.load(Ordering::Relaxed))
            .expect("Workers::start makes at least one worker");
        let future = make(index);
        let count = Counted::new(worker.runs.clone());
        worker.handle.spawn(async move {
            let _count = count;
            future.await
        })
    }
}

/// A worker thread's life: its runtime, its own target, then runs until told to stop.
fn serve(
    target: Option<LocalTarget>,
    ready: oneshot::Sender<Result<(Handle, Option<String>), WorkersError>>,
    stop: oneshot::Receiver<()>,
) {
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => {
            let _ = ready.send(Err(WorkersError::Runtime(e)));
            return;
        }
    };
    runtime.block_on(async move {
        let (url, guard) = match target {
            None => (None, None),
            // In a task of its own, so that a panic in it is an error that says so.
            Some(LocalTarget(start)) => match tokio::spawn(start()).await {
                Ok(Ok((url, guard))) => (Some(url), Some(guard)),
                Ok(Err(e)) => {
                    let _ = ready.send(Err(WorkersError::Target(e)));
                    return;
                }
                Err(e) => {
                    let _ = ready.send(Err(WorkersError::Ended(e.to_string())));
                    return;
                }
            },
        };
        if ready.send(Ok((Handle::current(), url))).is_err() {
            return;
        }
        // Spawned runs make progress while this thread waits here; a dropped sender stops it.
        let _ = stop.await;
        drop(guard);
    });
}

/// One run counted on its worker while it is under way (finished, cancelled or panicked).
struct Counted(Arc<AtomicUsize>);

impl Counted {
    fn new(runs: Arc<AtomicUsize>) -> Self {
        runs.fetch_add(1, Ordering::Relaxed);
        Counted(runs)
    }
}

impl Drop for Counted {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn runs_go_to_the_least_busy_worker_and_a_panic_is_the_handles_error() {
        let workers = Workers::start(2, None).await.expect("workers start");
        assert_eq!(workers.len(), 2);
        let (hold_tx, hold_rx) = oneshot::channel::<()>();
        let held = workers.spawn(|_| async move {
            let _ = hold_rx.await;
            std::thread::current().name().map(str::to_owned)
        });
        // The first worker has a run under way: the next goes to the other.
        let other = workers.spawn(|_| async { std::thread::current().name().map(str::to_owned) });
        let other = other.await.expect("the run ends");
        let _ = hold_tx.send(());
        let held = held.await.expect("the run ends");
        assert_ne!(held, other);
        assert!(held.is_some_and(|n| n.starts_with("wireprobe-worker-")));
        let panicked = workers.spawn(|_| async { panic!("a harness bug") });
        assert!(panicked.await.is_err_and(|e| e.is_panic()));
    }

    #[tokio::test]
    async fn each_worker_starts_its_own_target_and_a_failed_one_is_an_error() {
        let target = LocalTarget::new(|| {
            Box::pin(async {
                let name = std::thread::current().name().unwrap_or("?").to_owned();
                Ok((format!("local://{name}"), Box::new(()) as TargetGuard))
            })
        });
        let workers = Workers::start(2, Some(&target))
            .await
            .expect("workers start");
        // Both runs held under way, so the second cannot go where the first was.
        let (release, held) = tokio::sync::watch::channel(false);
        let urls: Vec<_> = (0..2)
            .map(|_| {
                let mut held = held.clone();
                workers.spawn(|i| {
                    let url = workers.target_url(i).map(str::to_owned);
                    async move {
                        let _ = held.wait_for(|go| *go).await;
                        url
                    }
                })
            })
            .collect();
        let _ = release.send(true);
        let mut seen = Vec::new();
        for url in urls {
            seen.push(url.await.expect("the run ends"));
        }
        seen.sort();
        assert_eq!(
            seen,
            [
                Some("local://wireprobe-worker-0".to_owned()),
                Some("local://wireprobe-worker-1".to_owned())
            ]
        );
        let failing = LocalTarget::new(|| Box::pin(async { Err("port taken".to_owned()) }));
        let err = Workers::start(1, Some(&failing)).await.err();
        assert!(matches!(err, Some(WorkersError::Target(e)) if e == "port taken"));
        let panicking = LocalTarget::new(|| Box::pin(async { panic!("a reference bug") }));
        let err = Workers::start(1, Some(&panicking)).await.err();
        assert!(
            matches!(&err, Some(WorkersError::Ended(e)) if e.contains("a reference bug")),
            "{err:?}"
        );
    }
}
