//! `arbiter watch`: the live page of a run folder, served over HTTP (axum) on the loopback
//! interface unless told otherwise. Read-only: the page has no request that changes the run;
//! the only file the watcher writes is `live/watching`, which asks the run to write its games
//! in progress.

use super::Failure;
use arbiter::report::watch::Watched;
use arbiter::tournament::live::WATCH_TOUCH;
use axum::extract::State;
use axum::http::header;
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{Html, IntoResponse};
use axum::routing::get;
use axum::Router;
use std::convert::Infallible;
use std::net::{IpAddr, SocketAddr};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::watch;

/// How often the journals and live files are read.
const REFRESH: Duration = Duration::from_millis(250);

#[derive(clap::Args, Debug)]
pub struct WatchArgs {
    /// The run folder: a run's (reports/match-...), or a split run's with its shard-K-of-N
    /// folders. Playing or finished.
    pub dir: PathBuf,
    /// Port to serve on; 0 picks a free one. The address is printed.
    #[arg(long, default_value_t = 0)]
    pub port: u16,
    /// Address to listen on. The default serves this machine only; give 0.0.0.0 to let other
    /// machines look (the page is read-only, but anyone who reaches it sees the run).
    #[arg(long, default_value = "127.0.0.1")]
    pub bind: IpAddr,
    /// Seconds a connection may stay silent both ways before it is closed (the live events
    /// stream sends a keep-alive every 15 s, so an open page is never idle)
    #[arg(long, default_value_t = 60.0, value_name = "SECONDS")]
    pub idle_timeout: f64,
    /// Seconds to wait for the run to start when the folder holds none yet (a run just started
    /// in the background writes its run.json once its engines have started)
    #[arg(long, default_value_t = 60.0, value_name = "SECONDS")]
    pub wait: f64,
}

struct Shared {
    followed: Mutex<Watched>,
    /// The report page, built for the `version` of the follower it was made from.
    report: Mutex<(u64, Arc<String>)>,
    state: watch::Receiver<Arc<String>>,
}

pub fn run(args: WatchArgs) -> Result<(), Failure> {
    let followed = open_when_started(&args)?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .map_err(|e| Failure::io(format!("cannot start: {e}")))?;
    runtime.block_on(serve(args, followed))
}

/// The run in the folder, waited for up to `--wait` seconds while the folder holds none yet.
fn open_when_started(args: &WatchArgs) -> Result<Watched, Failure> {
    let deadline =
        std::time::Instant::now() + Duration::from_secs_f64(args.wait.clamp(0.0, 86_400.0));
    let mut said = false;
    loop {
        match Watched::open(&args.dir) {
            Ok(followed) => return Ok(followed),
            Err(why) if std::time::Instant::now() >= deadline || holds_a_run(&args.dir) => {
                return Err(Failure::bad_input(why))
            }
            Err(_) => {
                if !said {
                    eprintln!(
                        "waiting up to {}s for a run to start in {}",
                        args.wait,
                        args.dir.display()
                    );
                    said = true;
                }
                std::thread::sleep(REFRESH);
            }
        }
    }
}

/// Whether a run has started in `dir`: its run.json, or a task's, is there (a run that then
/// cannot be read is an error at once, not something to wait for).
fn holds_a_run(dir: &std::path::Path) -> bool {
    let spec = arbiter::tournament::spec::SPEC_FILE;
    dir.join(spec).exists()
        || std::fs::read_dir(dir)
            .into_iter()
            .flatten()
            .flatten()
            .any(|e| e.path().join(spec).exists())
}

async fn serve(args: WatchArgs, mut followed: Watched) -> Result<(), Failure> {
    followed.touch();
    followed.refresh();
    let (tx, rx) = watch::channel(Arc::new(followed.state_json()));
    let shared = Arc::new(Shared {
        followed: Mutex::new(followed),
        report: Mutex::new((u64::MAX, Arc::new(String::new()))),
        state: rx,
    });
    let listener = tokio::net::TcpListener::bind(SocketAddr::new(args.bind, args.port))
        .await
        .map_err(|e| {
            Failure::bad_input(format!("cannot listen on {}:{}: {e}", args.bind, args.port))
        })?;
    let at = listener
        .local_addr()
        .map_err(|e| Failure::io(format!("cannot listen: {e}")))?;
    println!(
        "Watching {} at http://{at}/ (Ctrl-C to stop)",
        args.dir.display()
    );
    let follower = shared.clone();
    tokio::spawn(async move {
        let mut touched = tokio::time::Instant::now();
        loop {
            tokio::time::sleep(REFRESH).await;
            let state = {
                let mut f = follower.followed.lock().unwrap_or_else(|e| e.into_inner());
                if touched.elapsed() >= WATCH_TOUCH {
                    f.touch();
                    touched = tokio::time::Instant::now();
                }
                f.refresh();
                f.state_json()
            };
            if **tx.borrow() != state {
                let _ = tx.send(Arc::new(state));
            }
        }
    });
    let app = Router::new()
        .route("/", get(page))
        .route("/state.json", get(state))
        .route("/events", get(events))
        .route("/report.html", get(report))
        .layer(axum::middleware::from_fn_with_state(
            args.bind.is_loopback(),
            host_check,
        ))
        .with_state(shared);
    let idle = Duration::try_from_secs_f64(args.idle_timeout)
        .ok()
        .filter(|d| !d.is_zero())
        .ok_or_else(|| Failure::bad_input("--idle-timeout: a number of seconds above 0"))?;
    axum::serve(super::watch_conn::Bounded::new(listener, idle), app)
        .with_graceful_shutdown(async {
            let _ = tokio::signal::ctrl_c().await;
        })
        .await
        .map_err(|e| Failure::io(format!("serving the page failed: {e}")))
}

/// A page served on the loopback answers only requests addressed to the loopback by name or
/// number: a web page elsewhere whose name was made to resolve to 127.0.0.1 (DNS rebinding)
/// is refused, so it cannot read the run through the user's browser.
async fn host_check(
    State(loopback): State<bool>,
    request: axum::extract::Request,
    next: axum::middleware::Next,
) -> axum::response::Response {
    let host = request
        .headers()
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .unwrap_or("");
    if !loopback || host_is_local(host) {
        return next.run(request).await;
    }
    (
        axum::http::StatusCode::MISDIRECTED_REQUEST,
        "arbiter watch answers requests for localhost only\n",
    )
        .into_response()
}

/// `localhost`, `127.0.0.1:8080`, `[::1]:80`: a name or address of this machine's loopback.
fn host_is_local(host: &str) -> bool {
    let name = match host.strip_prefix('[') {
        Some(rest) => rest.split(']').next().unwrap_or(""),
        None => host.rsplit_once(':').map_or(host, |(name, _)| name),
    };
    name.eq_ignore_ascii_case("localhost")
        || name.parse::<IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

async fn page() -> Html<&'static str> {
    Html(PAGE)
}

async fn state(State(shared): State<Arc<Shared>>) -> impl IntoResponse {
    let body = shared.state.borrow().as_str().to_owned();
    ([(header::CONTENT_TYPE, "application/json")], body)
}

/// Every new state as a server-sent event, the current one first.
async fn events(
    State(shared): State<Arc<Shared>>,
) -> Sse<impl futures_util::Stream<Item = Result<Event, Infallible>>> {
    let rx = shared.state.clone();
    let stream = futures_util::stream::unfold((rx, true), |(mut rx, first)| async move {
        if !first && rx.changed().await.is_err() {
            return None;
        }
        let data = rx.borrow_and_update().as_str().to_owned();
        Some((Ok(Event::default().event("state").data(data)), (rx, false)))
    });
    Sse::new(stream).keep_alive(KeepAlive::default())
}

/// The run's report of the games counted so far, rebuilt only when a game was counted.
async fn report(State(shared): State<Arc<Shared>>) -> Html<String> {
    let followed = shared.followed.lock().unwrap_or_else(|e| e.into_inner());
    let mut cached = shared.report.lock().unwrap_or_else(|e| e.into_inner());
    if cached.0 != followed.version {
        *cached = (followed.version, Arc::new(followed.report_html()));
    }
    Html(cached.1.as_str().to_owned())
}

/// The page: a few lines of script that fetch the state twice a second and show it (`/events`
/// streams the same states as server-sent events, for scripts: `curl -N .../events`); the report
/// below is the run's own page in a frame, reloaded (keeping its scroll) when a game was counted.
const PAGE: &str = r###"<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1"><title>arbiter watch</title>
<style>
body{font-family:sans-serif;margin:1em;max-width:72em;color:#222}
h1{font-size:1.3em}h2{font-size:1.1em;margin-top:1.2em}
table{border-collapse:collapse;display:block;overflow-x:auto}td,th{border:1px solid #ccc;padding:.2em .5em;text-align:right}
td:nth-child(2){text-align:left}
#live{display:flex;flex-wrap:wrap;gap:1em}.game{border:1px solid #ccc;padding:.5em;max-width:100%}
.game svg{max-width:100%;height:auto}
iframe{width:100%;border:1px solid #ccc;min-height:30em}
.note{color:#666;font-size:.9em}
</style></head><body>
<h1 id="title">arbiter watch</h1>
<p id="status">connecting…</p>
<h2>Standings</h2>
<table id="live-standings"><tr><th>rank</th><th>engine</th><th>Elo</th><th>lower</th><th>upper</th><th>games</th><th>points</th><th>score</th><th>draws</th></tr></table>
<h2>Games in progress</h2>
<div id="live"></div>
<h2>Report of the games counted so far</h2>
<p class="note">The run's own report, rebuilt as games finish: charts, SPRT, crosstable, and the finished games in the viewer.</p>
<iframe id="report" src="report.html" title="report"></iframe>
<script>
(function(){
const $=id=>document.getElementById(id);
const esc=t=>String(t??'').replace(/&/g,'&amp;').replace(/</g,'&lt;').replace(/>/g,'&gt;');
const clock=ms=>ms==null?'-':(ms/1000).toFixed(1)+' s';
let shown=-1;
const frame=$('report');
frame.addEventListener('load',()=>{try{const d=frame.contentDocument;frame.style.height=(d.documentElement.scrollHeight+20)+'px';}catch(e){}});
function show(s){
 $('title').textContent=s.event+' ('+s.game+')';
 $('status').textContent=`${s.status}: ${s.done} of ${s.total} games counted`+(s.llr!=null?`, LLR ${s.llr}`:'')+`, ${s.live.length} in progress`;
 $('live-standings').innerHTML='<tr><th>rank</th><th>engine</th><th>Elo</th><th>lower</th><th>upper</th><th>games</th><th>points</th><th>score</th><th>draws</th></tr>'+
  s.standings.map((r,i)=>'<tr><td>'+(i+1)+'</td>'+r.map(c=>'<td>'+esc(c)+'</td>').join('')+'</tr>').join('');
 $('live').innerHTML=s.live.length?s.live.map(g=>`<div class="game" data-game="${g.game}" data-ply="${g.ply}"><p><strong>#${g.game}</strong> ${esc(g.white)} - ${esc(g.black)}, round ${g.round}</p>${g.svg||''}<p class="ply">ply ${g.ply}${g.last?': '+esc(g.last):''}${g.ply<=g.book?' (book)':''}</p><p>clocks: ${esc(g.sides[0])} ${clock(g.clocks[0])}, ${esc(g.sides[1])} ${clock(g.clocks[1])}</p></div>`).join(''):'<p class="note">none right now</p>';
 if(s.report!==shown){shown=s.report;const y=window.scrollY;frame.src='report.html?v='+s.report;window.scrollTo(0,y);}
}
// Polled rather than streamed: each request ends, so the page also works where an open stream
// is held against it (proxies, headless browsers waiting for the network to go quiet).
function poll(){fetch('state.json',{cache:'no-store'}).then(r=>r.json()).then(show).catch(()=>{$('status').textContent='the watcher is not answering';});}
setInterval(poll,500);
poll();
})();
</script></body></html>"###;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_loopback_names_and_addresses_are_local() {
        for local in ["localhost", "localhost:8080", "127.0.0.1:1", "[::1]:80"] {
            assert!(host_is_local(local), "{local}");
        }
        for foreign in [
            "evil.example:8080",
            "",
            "10.0.0.1",
            "localhost.evil.example",
        ] {
            assert!(!host_is_local(foreign), "{foreign}");
        }
    }
}
