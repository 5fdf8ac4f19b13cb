//! The watch page's connections, bounded: a connection silent in both directions for the idle
//! time is closed; a request must arrive whole within `REQUEST_TIME` of its first byte (a
//! client that trickles a byte now and then is never idle, and once held twenty thousand
//! connections open and every real request out); at most `MOST_OPEN` connections are held, of
//! them at most `MOST_PER_CLIENT` from one address, and a newcomer past a bound takes the place
//! of a connection with no whole request: one still trickling its request first, then one
//! silent, oldest first. A real request arrives whole at once, so it keeps its place however
//! many connections a local program opens after it, even before the server has answered.

use std::io;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio::time::{Instant, Sleep};

/// Descriptors kept for everything but connections: the run's files, the runtime's own.
const SPARE_DESCRIPTORS: u64 = 64;

/// How long a request may take to arrive whole, from its first byte.
const REQUEST_TIME: Duration = Duration::from_secs(5);
/// The most connections held at once: a page takes a few; memory stays a few megabytes.
const MOST_OPEN: u64 = 512;
/// The most connections held for one address.
const MOST_PER_CLIENT: usize = 64;

/// A listener whose connections end when idle or slow, and which holds no more than `open` at
/// once.
pub struct Bounded {
    listener: TcpListener,
    open: Arc<Semaphore>,
    idle: Duration,
    /// The connections held, oldest first: who may be made to give way.
    held: Vec<(std::net::IpAddr, Arc<Conn>)>,
}

/// What the listener knows of a connection it handed out.
#[derive(Default)]
struct Conn {
    /// The connection's socket, to peek at a request not yet read.
    fd: std::os::fd::RawFd,
    /// Set once a reply has been written: a connection in use by a page.
    answered: std::sync::atomic::AtomicBool,
    /// Set once a request's head has arrived whole (its blank line read).
    whole: std::sync::atomic::AtomicBool,
    /// Set once any byte of a request has arrived.
    begun: std::sync::atomic::AtomicBool,
    /// Set when a newcomer takes its place; the connection then ends at its next poll.
    evicted: std::sync::atomic::AtomicBool,
    waker: std::sync::Mutex<Option<std::task::Waker>>,
    /// Set when the connection is gone.
    closed: std::sync::atomic::AtomicBool,
}

impl Conn {
    fn evict(&self) {
        self.evicted
            .store(true, std::sync::atomic::Ordering::SeqCst);
        if let Some(waker) = self.waker.lock().ok().and_then(|mut w| w.take()) {
            waker.wake();
        }
    }
}

impl Bounded {
    /// Raises the descriptor limit to what the system allows this process, and takes as many
    /// connections as it leaves room for, at most `MOST_OPEN`.
    pub fn new(listener: TcpListener, idle: Duration) -> Bounded {
        let limit = raise_descriptor_limit();
        let most = limit.saturating_sub(SPARE_DESCRIPTORS).clamp(1, MOST_OPEN);
        Bounded {
            listener,
            open: Arc::new(Semaphore::new(most as usize)),
            idle,
            held: Vec::new(),
        }
    }

    /// Makes room for a newcomer from `from`: past the bound for its address, or for all, a
    /// connection without a whole request (of that address first) gives way.
    fn make_room(&mut self, from: std::net::IpAddr) {
        use std::sync::atomic::Ordering;
        self.held
            .retain(|(_, c)| !c.closed.load(Ordering::SeqCst) && !c.evicted.load(Ordering::SeqCst));
        let theirs = self.held.iter().filter(|(ip, _)| *ip == from).count();
        let full = self.open.available_permits() == 0;
        if theirs < MOST_PER_CLIENT && !full {
            return;
        }
        let victim = self.loose_victim(from, true).or_else(|| {
            self.loose_victim(from, false).or_else(|| {
                (theirs >= MOST_PER_CLIENT).then(|| {
                    self.held
                        .iter()
                        .position(|(ip, _)| *ip == from)
                        .unwrap_or(0)
                })
            })
        });
        if let Some(at) = victim {
            let (_, conn) = self.held.remove(at);
            conn.evict();
        }
    }
}

impl Bounded {
    /// The place of the connection to give way among those without a whole request (of `from`
    /// only, if `ours`): one trickling its request, else one silent, oldest first. A silent one
    /// whose request already waits whole in the kernel, unread only because the server is busy,
    /// is no candidate: it is a real request.
    fn loose_victim(&self, from: std::net::IpAddr, ours: bool) -> Option<usize> {
        use std::sync::atomic::Ordering;
        let loose =
            |c: &Conn| !c.answered.load(Ordering::SeqCst) && !c.whole.load(Ordering::SeqCst);
        let mine = |ip: &std::net::IpAddr| !ours || *ip == from;
        let trickling = self
            .held
            .iter()
            .position(|(ip, c)| mine(ip) && loose(c) && c.begun.load(Ordering::SeqCst));
        trickling.or_else(|| {
            self.held.iter().position(|(ip, c)| {
                mine(ip) && loose(c) && !c.begun.load(Ordering::SeqCst) && {
                    let waiting = whole_request_waiting(c);
                    c.whole.store(waiting, Ordering::SeqCst);
                    !waiting
                }
            })
        })
    }
}

/// Whether a connection not yet read has a whole request head waiting in the kernel (peeked,
/// so the server still reads it).
fn whole_request_waiting(conn: &Conn) -> bool {
    let mut head = [0u8; 4096];
    if conn.closed.load(std::sync::atomic::Ordering::SeqCst) {
        return false;
    }
    // SAFETY: recv writes at most head.len() bytes into head; MSG_PEEK leaves them queued. The
    // descriptor belongs to a connection not yet closed (checked above); were it closed and
    // reused meanwhile, the peek only misjudges which connection gives way.
    let got = unsafe {
        libc::recv(
            conn.fd,
            head.as_mut_ptr().cast(),
            head.len(),
            libc::MSG_PEEK | libc::MSG_DONTWAIT,
        )
    };
    usize::try_from(got).is_ok_and(|n| head[..n].windows(4).any(|w| w == b"\r\n\r\n"))
}

/// The soft limit on open descriptors, raised to the hard one first.
fn raise_descriptor_limit() -> u64 {
    // SAFETY: getrlimit/setrlimit read and write the struct passed by pointer.
    unsafe {
        let mut limit: libc::rlimit = std::mem::zeroed();
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) != 0 {
            return 1024;
        }
        if limit.rlim_cur < limit.rlim_max {
            let raised = libc::rlimit {
                rlim_cur: limit.rlim_max,
                rlim_max: limit.rlim_max,
            };
            if libc::setrlimit(libc::RLIMIT_NOFILE, &raised) == 0 {
                limit = raised;
            }
        }
        limit.rlim_cur
    }
}

impl axum::serve::Listener for Bounded {
    type Io = IdleClosing;
    type Addr = SocketAddr;

    async fn accept(&mut self) -> (IdleClosing, SocketAddr) {
        loop {
            let (stream, from) = match self.listener.accept().await {
                Ok(accepted) => accepted,
                Err(_) => {
                    // Out of descriptors or a connection reset before it was taken: wait a
                    // little, as the runtime's own listener does, rather than spin.
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            };
            self.make_room(from.ip());
            // The connection that gave way lets go of its place as soon as it is polled.
            let permit =
                tokio::time::timeout(Duration::from_secs(1), self.open.clone().acquire_owned())
                    .await;
            // Still no place: the newcomer is closed (dropped) rather than left to wait unseen.
            if let Ok(Ok(permit)) = permit {
                let conn = Arc::new(Conn {
                    fd: std::os::fd::AsRawFd::as_raw_fd(&stream),
                    ..Conn::default()
                });
                self.held.push((from.ip(), conn.clone()));
                return (IdleClosing::new(stream, permit, self.idle, conn), from);
            }
        }
    }

    fn local_addr(&self) -> io::Result<SocketAddr> {
        self.listener.local_addr()
    }
}

/// A connection that fails with `TimedOut` once nothing has moved either way for its idle time.
pub struct IdleClosing {
    stream: TcpStream,
    idle: Duration,
    timer: Pin<Box<Sleep>>,
    /// When the request being read began, if one is (reset by each reply).
    request_began: Option<Instant>,
    /// How much of the blank line ending a request head ("\r\n\r\n") the last bytes matched.
    head_end: usize,
    conn: Arc<Conn>,
    _counted: OwnedSemaphorePermit,
}

impl IdleClosing {
    fn new(
        stream: TcpStream,
        counted: OwnedSemaphorePermit,
        idle: Duration,
        conn: Arc<Conn>,
    ) -> IdleClosing {
        IdleClosing {
            stream,
            idle,
            timer: Box::pin(tokio::time::sleep(idle)),
            request_began: None,
            head_end: 0,
            conn,
            _counted: counted,
        }
    }

    /// What an operation that is not ready yet returns: still waiting, or timed out.
    fn waiting<T>(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<T>> {
        if let Ok(mut waker) = self.conn.waker.lock() {
            *waker = Some(cx.waker().clone());
        }
        if self.given_way() {
            return Poll::Ready(Err(io::ErrorKind::ConnectionAborted.into()));
        }
        match self.timer.as_mut().poll(cx) {
            Poll::Ready(()) => Poll::Ready(Err(io::ErrorKind::TimedOut.into())),
            Poll::Pending => Poll::Pending,
        }
    }

    fn given_way(&self) -> bool {
        self.conn.evicted.load(std::sync::atomic::Ordering::SeqCst)
    }

    fn moved(&mut self) {
        let idle = self.idle;
        self.timer.as_mut().reset(Instant::now() + idle);
    }

    /// Bytes of a request arrived: too slow a request ends the connection.
    fn read_some(&mut self, bytes: &[u8]) -> io::Result<()> {
        use std::sync::atomic::Ordering;
        self.conn.begun.store(true, Ordering::SeqCst);
        for &b in bytes {
            self.head_end = match (self.head_end, b) {
                (0 | 2, b'\r') => self.head_end + 1,
                (1 | 3, b'\n') => self.head_end + 1,
                (_, b'\r') => 1,
                _ => 0,
            };
            if self.head_end == 4 {
                self.conn.whole.store(true, Ordering::SeqCst);
                self.head_end = 0;
            }
        }
        let began = *self.request_began.get_or_insert_with(Instant::now);
        match began.elapsed() > REQUEST_TIME {
            true => Err(io::ErrorKind::TimedOut.into()),
            false => Ok(()),
        }
    }

    /// A reply was written: the request was whole, and the connection is a page's.
    fn answered(&mut self) {
        self.request_began = None;
        self.conn
            .answered
            .store(true, std::sync::atomic::Ordering::SeqCst);
    }
}

impl Drop for IdleClosing {
    fn drop(&mut self) {
        self.conn
            .closed
            .store(true, std::sync::atomic::Ordering::SeqCst);
    }
}

use std::future::Future;

impl AsyncRead for IdleClosing {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        if self.given_way() {
            return Poll::Ready(Err(io::ErrorKind::ConnectionAborted.into()));
        }
        let before = buf.filled().len();
        match Pin::new(&mut self.stream).poll_read(cx, buf) {
            Poll::Ready(Ok(())) if buf.filled().len() > before => {
                self.moved();
                let done = self.read_some(&buf.filled()[before..]);
                Poll::Ready(done)
            }
            Poll::Ready(done) => {
                self.moved();
                Poll::Ready(done)
            }
            Poll::Pending => self.waiting(cx),
        }
    }
}

impl AsyncWrite for IdleClosing {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        match Pin::new(&mut self.stream).poll_write(cx, buf) {
            Poll::Ready(done) => {
                self.moved();
                self.answered();
                Poll::Ready(done)
            }
            Poll::Pending => self.waiting(cx),
        }
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.stream).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.stream).poll_shutdown(cx)
    }
}
