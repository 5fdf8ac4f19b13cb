//! The watch page's connections, bounded: a connection silent in both directions for the idle
//! time is closed, and past a number of open connections that leaves the process descriptors to
//! spare a new one is closed at once. Idle connections held open by a local program (tens of
//! thousands reached the descriptor limit, and the page stopped answering) cost nothing for
//! longer than the idle time.

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

/// A listener whose connections end when idle, and which holds no more than `open` at once.
pub struct Bounded {
    listener: TcpListener,
    open: Arc<Semaphore>,
    idle: Duration,
}

impl Bounded {
    /// Raises the descriptor limit to what the system allows this process, and takes as many
    /// connections as it leaves room for.
    pub fn new(listener: TcpListener, idle: Duration) -> Bounded {
        let limit = raise_descriptor_limit();
        let most = limit.saturating_sub(SPARE_DESCRIPTORS).clamp(1, 1 << 16);
        Bounded {
            listener,
            open: Arc::new(Semaphore::new(most as usize)),
            idle,
        }
    }
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
            // At the bound, the newcomer is closed (dropped) rather than left to wait unseen.
            if let Ok(permit) = self.open.clone().try_acquire_owned() {
                return (IdleClosing::new(stream, permit, self.idle), from);
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
    _counted: OwnedSemaphorePermit,
}

impl IdleClosing {
    fn new(stream: TcpStream, counted: OwnedSemaphorePermit, idle: Duration) -> IdleClosing {
        IdleClosing {
            stream,
            idle,
            timer: Box::pin(tokio::time::sleep(idle)),
            _counted: counted,
        }
    }

    /// What an operation that is not ready yet returns: still waiting, or timed out.
    fn waiting<T>(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<T>> {
        match self.timer.as_mut().poll(cx) {
            Poll::Ready(()) => Poll::Ready(Err(io::ErrorKind::TimedOut.into())),
            Poll::Pending => Poll::Pending,
        }
    }

    fn moved(&mut self) {
        let idle = self.idle;
        self.timer.as_mut().reset(Instant::now() + idle);
    }
}

use std::future::Future;

impl AsyncRead for IdleClosing {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        match Pin::new(&mut self.stream).poll_read(cx, buf) {
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
