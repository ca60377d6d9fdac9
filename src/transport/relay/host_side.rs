//! The relay process itself, the end the host starts as its agent: its stdin goes up to the
//! run as `D` records, the run's bytes come down to its stdout as they are, and after each
//! line written down a `W` record says so.
//!
//! Order is the point. Before each write down, the relay takes in whatever the host has
//! already written to its stdin and sends that up first: a line the host wrote before one of
//! the run's lines reached it is then ahead of that line's `W` record, whatever the two
//! processes' scheduling. One thread polls both sides, so no second queue reorders them.

use super::records::{data_head, written, MAX_DATA};
use std::io::{Read, Write};
use std::net::{Shutdown, TcpStream};
use std::os::fd::{AsRawFd, FromRawFd, RawFd};

/// Bytes written down at a time: a pipe that polled writable takes this many without
/// blocking (POSIX's `PIPE_BUF`), so a host that stops reading cannot stop us reading it.
const WRITE_AT_MOST: usize = 512;
/// Reads of the host's stdin taken in before one write down at most, so a host that never
/// stops writing cannot keep the run's lines from it.
const MAX_CATCH_UP: usize = 64;

/// The relay's one connection and the host's two pipes.
struct Relay {
    tcp: TcpStream,
    stdin: std::mem::ManuallyDrop<std::fs::File>,
    stdout: std::mem::ManuallyDrop<std::fs::File>,
    /// The host has closed its end of our stdin.
    stdin_done: bool,
    /// The run's bytes read but not yet written down.
    down: Vec<u8>,
    /// Where the unwritten bytes in `down` start.
    down_at: usize,
    /// The run's bytes written down so far.
    written: u64,
    buf: Vec<u8>,
}

/// How one step of the loop ended.
enum Step {
    Go,
    /// The run or the host is gone: nothing more can pass.
    Done,
}

/// Relays between this process's stdio and the run at `tcp` until either side is gone.
pub fn relay(tcp: TcpStream) -> std::io::Result<()> {
    let _ = tcp.set_nodelay(true);
    // Raw descriptors: std's stdin buffers what it reads, which a poll on fd 0 would not see.
    // ManuallyDrop: the process owns them, not this loop.
    let (stdin, stdout) = unsafe {
        (
            std::fs::File::from_raw_fd(libc::STDIN_FILENO),
            std::fs::File::from_raw_fd(libc::STDOUT_FILENO),
        )
    };
    let mut relay = Relay {
        tcp,
        stdin: std::mem::ManuallyDrop::new(stdin),
        stdout: std::mem::ManuallyDrop::new(stdout),
        stdin_done: false,
        down: Vec::new(),
        down_at: 0,
        written: 0,
        // Read from either side at most one record's worth at a time.
        buf: vec![0; MAX_DATA],
    };
    while let Step::Go = relay.step()? {}
    Ok(())
}

impl Relay {
    fn has_down(&self) -> bool {
        self.down_at < self.down.len()
    }

    /// Waits until a side is ready, then serves it.
    fn step(&mut self) -> std::io::Result<Step> {
        let off = |on: bool, fd: RawFd| if on { fd } else { -1 };
        let mut fds = [
            poll_fd(off(!self.stdin_done, libc::STDIN_FILENO), libc::POLLIN),
            // Read from the run only once what it sent is written: the host's pace bounds ours.
            poll_fd(off(!self.has_down(), self.tcp.as_raw_fd()), libc::POLLIN),
            poll_fd(off(self.has_down(), libc::STDOUT_FILENO), libc::POLLOUT),
        ];
        if !poll(&mut fds, -1)? {
            return Ok(Step::Go);
        }
        let [stdin, tcp, stdout] = fds.map(|fd| fd.revents);
        if stdin != 0 {
            self.take_host_input()?;
        }
        if tcp != 0 {
            let n = self.tcp.read(&mut self.buf)?;
            if n == 0 {
                return Ok(Step::Done);
            }
            self.down.clear();
            self.down.extend_from_slice(&self.buf[..n]);
            self.down_at = 0;
        }
        if stdout & libc::POLLOUT != 0 {
            return self.write_down();
        }
        if stdout != 0 {
            // Only an error or hang-up: the host closed its end of our stdout.
            return Ok(Step::Done);
        }
        Ok(Step::Go)
    }

    /// Reads what the host wrote (once) and sends it up; at its end, tells the run so by
    /// closing our sending half (the run's lines may still be coming down).
    fn take_host_input(&mut self) -> std::io::Result<()> {
        let n = match self.stdin.read(&mut self.buf) {
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => return Ok(()),
            Err(_) => 0,
        };
        if n == 0 {
            self.stdin_done = true;
            return self.tcp.shutdown(Shutdown::Write);
        }
        self.tcp.write_all(&data_head(n))?;
        self.tcp.write_all(&self.buf[..n])
    }

    /// Takes in what the host has already written, then writes the run's next bytes down, up
    /// to the end of a line, and says how far the run's bytes have been written.
    fn write_down(&mut self) -> std::io::Result<Step> {
        for _ in 0..MAX_CATCH_UP {
            if self.stdin_done {
                break;
            }
            let mut fd = [poll_fd(libc::STDIN_FILENO, libc::POLLIN)];
            if !poll(&mut fd, 0)? || fd[0].revents == 0 {
                break;
            }
            self.take_host_input()?;
        }
        let rest = &self.down[self.down_at..];
        let line_end = rest
            .iter()
            .position(|&b| b == b'\n')
            .map_or(rest.len(), |i| i + 1);
        let n = match self.stdout.write(&rest[..line_end.min(WRITE_AT_MOST)]) {
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => return Ok(Step::Go),
            Err(_) => return Ok(Step::Done),
        };
        self.down_at += n;
        self.written += n as u64;
        self.tcp.write_all(&written(self.written))?;
        Ok(Step::Go)
    }
}

fn poll_fd(fd: RawFd, events: libc::c_short) -> libc::pollfd {
    libc::pollfd {
        fd,
        events,
        revents: 0,
    }
}

/// Polls `fds` for up to `timeout_ms` (-1: until one is ready); false when interrupted or
/// nothing was ready.
fn poll(fds: &mut [libc::pollfd], timeout_ms: libc::c_int) -> std::io::Result<bool> {
    // SAFETY: `fds` is a valid slice of pollfd for its length.
    let ready = unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, timeout_ms) };
    if ready < 0 {
        let e = std::io::Error::last_os_error();
        return match e.kind() {
            std::io::ErrorKind::Interrupted => Ok(false),
            _ => Err(e),
        };
    }
    Ok(ready > 0)
}
