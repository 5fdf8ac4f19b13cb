//! The game viewer of report.html: a few games of the run replayed through the rules, ply by
//! ply — the board, the last move's laser beam and what it removed, the move list with each
//! engine's score, depth and time, both clocks — drawn by a small script inside the page (no network).
//! Large runs would make the page huge, so at most `--viewer-games` (default `MAX_SHOWN`) games
//! are embedded: games ended
//! by a fault first, then decisive ones, then the rest, each in schedule order.

use super::write::html_escape;
use crate::game::{find_game, Color, Outcome, Termination};
use crate::referee::clock::{Clock, TimeControl};
use crate::referee::MoveRecord;
use crate::tournament::journal::Entry;
use std::fmt::Write;
use std::time::Duration;

/// Games embedded in the viewer unless the run says otherwise (`--viewer-games`).
pub const MAX_SHOWN: usize = 20;

/// The games chosen so far, kept as the journal streams by.
#[derive(Clone)]
pub struct Showcase {
    chosen: Vec<(u8, Entry)>,
    cap: usize,
    pub seen: u64,
}

impl Default for Showcase {
    fn default() -> Showcase {
        Showcase::new(MAX_SHOWN)
    }
}

/// Lower is shown first: games a fault ended, then decisive games, then draws.
fn rank(entry: &Entry) -> u8 {
    let r = &entry.record;
    let fault = matches!(
        r.termination,
        Termination::IllegalMove
            | Termination::TimeForfeit
            | Termination::EngineCrash
            | Termination::EngineStall
            | Termination::MemoryLimit
    );
    match (fault, r.outcome) {
        (true, _) => 0,
        (false, Outcome::Draw) => 2,
        _ => 1,
    }
}

impl Showcase {
    /// A showcase of at most `cap` games (0: none).
    pub fn new(cap: usize) -> Showcase {
        Showcase {
            chosen: Vec::new(),
            cap,
            seen: 0,
        }
    }

    pub fn add(&mut self, entry: &Entry) {
        self.seen += 1;
        if self.cap == 0 {
            return;
        }
        let r = rank(entry);
        if self.chosen.len() == self.cap {
            // Entries come in schedule order: a later one replaces only a lower-ranked one.
            let Some(worst) = (0..self.chosen.len()).max_by_key(|&i| (self.chosen[i].0, i)) else {
                return;
            };
            if self.chosen[worst].0 <= r {
                return;
            }
            self.chosen.remove(worst);
        }
        self.chosen.push((r, entry.clone()));
    }

    fn games(&self) -> Vec<&Entry> {
        let mut games: Vec<&(u8, Entry)> = self.chosen.iter().collect();
        games.sort_by_key(|(r, e)| (*r, e.index));
        games.into_iter().map(|(_, e)| e).collect()
    }
}

/// A JSON string that is safe inside the page's script element: an engine called
/// `</script>` must not end it.
fn js(text: &str) -> String {
    serde_json::to_string(text)
        .unwrap_or_else(|_| "\"\"".into())
        .replace("</", "<\\/")
        .replace("<!--", "<\\!--")
}

fn js_list(items: &[String]) -> String {
    format!(
        "[{}]",
        items.iter().map(|s| js(s)).collect::<Vec<_>>().join(",")
    )
}

/// Both sides' clocks as the referee kept them, rebuilt from the record's time control tag
/// (`10+0.1`, or `white:black` when they differ) and each engine move's measured time; None
/// when a side played without a clock.
struct Clocks([Clock; 2]);

impl Clocks {
    fn of(time_control: &str) -> Option<Clocks> {
        let (white, black) = time_control
            .split_once(':')
            .unwrap_or((time_control, time_control));
        let clock = |tag: &str| TimeControl::parse(tag).ok().map(Clock::new);
        Some(Clocks([clock(white)?, clock(black)?]))
    }

    /// Charges a move as the referee did (book moves are not timed).
    fn charge(&mut self, side: Color, m: &MoveRecord) {
        if !m.book {
            // The game ended on a forfeit if the time ran out; the clock shows zero.
            self.0[side.index()].charge(m.elapsed, Duration::ZERO);
        }
    }

    fn json(&self) -> String {
        let ms = |c: &Clock| c.remaining().as_millis();
        format!("[{},{}]", ms(&self.0[0]), ms(&self.0[1]))
    }
}

/// One game as the script reads it: the start, then each ply's position, move, beam, removed
/// squares, the mover's score, depth and time, and both clocks after it.
fn game_json(entry: &Entry) -> Option<String> {
    let r = &entry.record;
    let rules = find_game(&r.game)?;
    let mut game = rules.new_game(r.start_fen.as_deref()).ok()?;
    let mut clocks = Clocks::of(&r.time_control);
    let clock_json = |c: &Option<Clocks>| c.as_ref().map_or("null".into(), Clocks::json);
    let mut frames = vec![format!(
        "{{\"fen\":{},\"clk\":{}}}",
        js(&game.fen()),
        clock_json(&clocks)
    )];
    for m in &r.moves {
        let beam = game.beam_of(&m.text);
        let mover = game.turn();
        let Ok(report) = game.play(&m.text) else {
            break;
        };
        if let Some(c) = clocks.as_mut() {
            c.charge(mover, m);
        }
        let removed: Vec<String> = report
            .removed
            .iter()
            .map(|x| x.square.to_string())
            .collect();
        let score = m.score.map(|s| s.to_string()).unwrap_or_default();
        frames.push(format!(
            "{{\"fen\":{},\"mv\":{},\"beam\":{},\"rm\":{},\"sc\":{},\"d\":{},\"ms\":{},\"book\":{},\"clk\":{}}}",
            js(&game.fen()),
            js(&m.text),
            js_list(&beam),
            js_list(&removed),
            js(&score),
            m.depth.map_or("null".into(), |d| d.to_string()),
            m.elapsed.as_millis(),
            m.book,
            clock_json(&clocks)
        ));
    }
    Some(format!(
        "{{\"id\":{},\"game\":{},\"drawing\":[{},{},{}],\"white\":{},\"black\":{},\"result\":{},\"end\":{},\"frames\":[{}]}}",
        entry.index + 1,
        js(&r.game),
        rules.drawing.files,
        rules.drawing.first_rank,
        rules.drawing.letters,
        js(&r.white),
        js(&r.black),
        js(r.outcome.as_str()),
        js(&r.detail),
        frames.join(",")
    ))
}

/// The viewer's section of the page.
pub fn section(h: &mut String, showcase: &Showcase) {
    let games = showcase.games();
    if games.is_empty() {
        return;
    }
    let data: Vec<String> = games.iter().filter_map(|e| game_json(e)).collect();
    let _ = write!(
        h,
        "<h2 id=\"viewer\">Games</h2><p>{} of {} games shown{}. Buttons or the arrow keys step \
         through a game; the red line is the laser beam of the move, ending on the piece it removed.</p>",
        data.len(),
        showcase.seen,
        if (data.len() as u64) < showcase.seen {
            format!(
                " (at most {}, --viewer-games: games a fault ended first, then decisive games, then draws)",
                showcase.cap
            )
        } else {
            String::new()
        }
    );
    let options: String = games
        .iter()
        .enumerate()
        .map(|(i, e)| {
            let r = &e.record;
            format!(
                "<option value=\"{i}\">#{} {} - {} {} ({})</option>",
                e.index + 1,
                html_escape(&r.white),
                html_escape(&r.black),
                r.outcome,
                r.termination
            )
        })
        .collect();
    let _ = write!(
        h,
        "<div id=\"view\"><p><select id=\"pick\">{options}</select> \
         <button id=\"first\">|&lt;</button><button id=\"prev\">&lt;</button>\
         <button id=\"next\">&gt;</button><button id=\"last\">&gt;|</button> \
         <span id=\"where\"></span></p><div id=\"board\"></div><p id=\"info\"></p>\
         <ol id=\"moves\"></ol></div><script id=\"viewer-script\">const GAMES=[{}];\n{SCRIPT}</script>",
        data.join(",")
    );
    game_list(h, &games);
}

/// The shown games as a table, each linked to its start and to its last ply in the viewer.
fn game_list(h: &mut String, games: &[&Entry]) {
    h.push_str(
        "<table id=\"shown-games\"><tr><th>game</th><th>white</th><th>black</th><th>result</th>\
         <th>ended by</th><th>plies</th><th></th></tr>",
    );
    for (i, e) in games.iter().enumerate() {
        let r = &e.record;
        let _ = write!(
            h,
            "<tr><td><a href=\"#g{i}p0\">#{}</a></td><td>{}</td><td>{}</td><td>{}</td>\
             <td title=\"{}\">{}</td><td>{}</td><td><a href=\"#g{i}p{}\">last move</a></td></tr>",
            e.index + 1,
            html_escape(&r.white),
            html_escape(&r.black),
            r.outcome,
            html_escape(&r.detail),
            r.termination,
            r.plies(),
            r.plies()
        );
    }
    h.push_str("</table>");
}

/// Draws a frame as `board_svg.rs` does, from the FEN's tokens read as the game's `Drawing`
/// (`drawing`: files, first rank, letters per piece) says.
const SCRIPT: &str = r###"(function(){
const C=48,M=22;let g=0,p=0;
const $=id=>document.getElementById(id);
function tokens(dr,fen){const field=fen.split(' ')[0].split('[')[0];const pairs=dr[2]>1;
 return field.split('/').map(rank=>{const cells=[];let i=0;while(i<rank.length){const c=rank[i];
  if(/[0-9]/.test(c)){let d='';while(i<rank.length&&/[0-9]/.test(rank[i]))d+=rank[i++];for(let k=0;k<+d;k++)cells.push(null);continue;}
  if(c==='*'){for(let k=0;k<dr[0];k++)cells.push(null);i++;continue;}
  const s=i;if(rank[i]==='+')i++;i+=dr[2];while(!pairs&&rank[i]==='+')i++;cells.push(rank.slice(s,i));}
  return cells;});}
function draw(dr,f){const rows=tokens(dr,f.fen),R=rows.length,F=Math.max(...rows.map(r=>r.length));
 const first=dr[1],w=F*C+2*M,h=R*C+2*M;
 const ctr=(x,y)=>[M+x*C+C/2,M+(R-1-y)*C+C/2];
 const at=s=>[s.charCodeAt(0)-97,parseInt(s.slice(1))-first];
 let o=`<svg xmlns="http://www.w3.org/2000/svg" class="board" width="${w}" height="${h}" viewBox="0 0 ${w} ${h}" font-family="sans-serif">`;
 rows.forEach((cells,row)=>{const y=R-1-row;for(let x=0;x<F;x++){
  o+=`<rect x="${M+x*C}" y="${M+row*C}" width="${C}" height="${C}" fill="${(x+y)%2==0?'#b58863':'#f0d9b5'}"/>`;
  const t=cells[x];if(t){const white=/[A-Z]/.test(t),[cx,cy]=ctr(x,y);
   o+=`<g class="piece" data-square="${String.fromCharCode(97+x)}${y+first}"><circle cx="${cx}" cy="${cy}" r="18" fill="${white?'#fff':'#222'}" stroke="#555"/><text x="${cx}" y="${cy+5}" text-anchor="middle" font-size="14" fill="${white?'#111':'#fff'}">${t.replace(/&/g,'&amp;').replace(/</g,'&lt;')}</text></g>`;}}});
 for(let x=0;x<F;x++)o+=`<text x="${ctr(x,0)[0]}" y="${h-6}" text-anchor="middle" font-size="12">${String.fromCharCode(97+x)}</text>`;
 for(let y=0;y<R;y++)o+=`<text x="6" y="${ctr(0,y)[1]+4}" font-size="12">${y+first}</text>`;
 const beam=f.beam||[];if(beam.length)o+=`<polyline class="beam" data-end="${beam[beam.length-1]}" points="${beam.map(s=>ctr(...at(s)).join(',')).join(' ')}" fill="none" stroke="#e00" stroke-width="4" stroke-opacity="0.8"/>`;
 for(const s of f.rm||[]){const[cx,cy]=ctr(...at(s));o+=`<g class="removed" data-square="${s}"><circle cx="${cx}" cy="${cy}" r="21" fill="none" stroke="#e00" stroke-width="3"/><line x1="${cx-12}" y1="${cy-12}" x2="${cx+12}" y2="${cy+12}" stroke="#e00" stroke-width="3"/></g>`;}
 return o+'</svg>';}
function show(){const G=GAMES[g],f=G.frames[p];$('pick').value=g;
 $('board').innerHTML=draw(G.drawing,f);
 $('where').textContent=`ply ${p} of ${G.frames.length-1}`;
 $('info').textContent=p==0?`${G.white} - ${G.black}: ${G.result}, ${G.end}`:
  `${p%2?G.white:G.black}: ${f.mv}${f.book?' (book)':` score ${f.sc||'-'} depth ${f.d??'-'} ${f.ms} ms`}${(f.rm||[]).length?', removed on '+f.rm.join(' '):''}`+
  (f.clk?`; clocks: white ${(f.clk[0]/1000).toFixed(2)} s, black ${(f.clk[1]/1000).toFixed(2)} s`:'');
 $('moves').innerHTML=G.frames.slice(1).map((m,i)=>`<li${i+1==p?' class="now"':''}><a href="#g${g}p${i+1}">${m.mv}</a></li>`).join('');
 history.replaceState(null,'',`#g${g}p${p}`);}
function go(n){p=Math.max(0,Math.min(GAMES[g].frames.length-1,n));show();}
$('first').onclick=()=>go(0);$('prev').onclick=()=>go(p-1);$('next').onclick=()=>go(p+1);$('last').onclick=()=>go(1e9);
$('pick').onchange=e=>{g=+e.target.value;p=0;show();};
document.addEventListener('keydown',e=>{if(e.key==='ArrowRight')go(p+1);if(e.key==='ArrowLeft')go(p-1);if(e.key==='Home')go(0);if(e.key==='End')go(1e9);});
function fromHash(){const m=/^#g(\d+)p(\d+)$/.exec(location.hash);if(m&&GAMES[+m[1]]){g=+m[1];p=+m[2];}go(p);if(m)$("view").scrollIntoView();}
window.addEventListener('hashchange',fromHash);fromHash();})();"###;
