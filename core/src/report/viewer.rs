//! The game viewer of report.html: a few games of the run replayed through the rules, ply by
//! ply — the board, the last move's laser beam and what it removed, the move list with each
//! engine's score, depth and time, both clocks — drawn by a small script inside the page (no
//! network). Large runs would make the page huge, so at most `--viewer-games` (default `MAX_SHOWN`)
//! games are embedded: games ended by a fault first, then decisive ones, then the rest, each in
//! schedule order.

use super::board_svg::{Board, Marks, CELL, MARGIN};
use super::write::html_escape;
use crate::clock::{Clock, TimeControl};
use crate::game::{find_game, Color, Outcome};
use crate::referee::MoveRecord;
use crate::tournament::journal::Entry;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write;
use std::time::Duration;

/// Games embedded in the viewer unless the run says otherwise (`--viewer-games`).
pub const MAX_SHOWN: usize = crate::tournament::spec::DEFAULT_VIEWER_GAMES;

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
    match (r.termination.is_fault(), r.outcome) {
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

/// `js(text)` appended to `out`. A FEN or a move needs no escape, and is copied as it is:
/// the viewer writes several for every ply of its games.
fn push_js(out: &mut String, text: &str) {
    let plain = |b: u8| b >= 0x20 && !matches!(b, b'"' | b'\\' | b'<');
    if text.bytes().all(plain) {
        out.push('"');
        out.push_str(text);
        out.push('"');
    } else {
        out.push_str(&js(text));
    }
}

fn push_js_list(out: &mut String, items: &[String]) {
    out.push('[');
    for (i, item) in items.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        push_js(out, item);
    }
    out.push(']');
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

    /// Both clocks as a JSON list, or `null` without clocks.
    fn push_json(clocks: &Option<Clocks>, out: &mut String) {
        match clocks {
            Some(Clocks([white, black])) => {
                let (w, b) = (white.remaining().as_millis(), black.remaining().as_millis());
                let _ = write!(out, "[{w},{b}]");
            }
            None => out.push_str("null"),
        }
    }
}

/// One game as the script reads it, appended to `out`: the start, then each ply's position,
/// move, the squares it names, beam, removed squares, the mover's score, depth and time, and
/// both clocks after it. Every FEN's piece tokens are added to `tokens`, for the page's piece
/// pictures. False, with nothing appended, for a game whose rules or start are unknown.
fn game_json(entry: &Entry, tokens: &mut BTreeSet<String>, out: &mut String) -> bool {
    let r = &entry.record;
    let Some(rules) = find_game(&r.game) else {
        return false;
    };
    let Ok(mut game) = rules.new_game(r.start_fen.as_deref()) else {
        return false;
    };
    let mut clocks = Clocks::of(&r.time_control);
    // Every position's pieces are noted, each rank once until a move changes it, and only a
    // token not seen before is copied.
    let mut before: Option<String> = None;
    let mut note = |fen: String| {
        rules
            .drawing
            .each_new_piece(before.as_deref(), &fen, |token| {
                if !tokens.contains(token) {
                    tokens.insert(token.to_string());
                }
            });
        before = Some(fen);
    };
    // Written straight into the page's data: a game has a frame for every ply, and the
    // viewer's games are most of the page.
    let _ = write!(
        out,
        "{{\"id\":{},\"game\":{},\"white\":{},\"black\":{},\"result\":{},\"end\":{},\"frames\":[",
        entry.index + 1,
        js(&r.game),
        js(&r.white),
        js(&r.black),
        js(r.outcome.as_str()),
        js(&r.detail),
    );
    let frames = out;
    frames.push_str("{\"fen\":");
    let fen = game.fen();
    push_js(frames, &fen);
    note(fen);
    frames.push_str(",\"clk\":");
    Clocks::push_json(&clocks, frames);
    frames.push('}');
    let mut score = String::new();
    for m in &r.moves {
        let mover = game.turn();
        let Ok(marks) = Marks::play(game.as_mut(), &m.text) else {
            break;
        };
        if let Some(c) = clocks.as_mut() {
            c.charge(mover, m);
        }
        let fen = game.fen();
        score.clear();
        if let Some(s) = m.score {
            let _ = write!(score, "{s}");
        }
        push_move_frame(frames, &fen, m, &marks, &score);
        note(fen);
        Clocks::push_json(&clocks, frames);
        frames.push('}');
    }
    frames.push_str("]}");
    true
}

/// A move's frame up to its clocks: the position after it, the move, what it moved, zapped and
/// removed, and what the engine said of it.
fn push_move_frame(frames: &mut String, fen: &str, m: &MoveRecord, marks: &Marks, score: &str) {
    frames.push_str(",{\"fen\":");
    push_js(frames, fen);
    frames.push_str(",\"mv\":");
    push_js(frames, &m.text);
    frames.push_str(",\"last\":");
    push_js_list(frames, &marks.moved);
    frames.push_str(",\"beam\":");
    push_js_list(frames, &marks.beam);
    frames.push_str(",\"rm\":");
    push_js_list(frames, &marks.removed);
    frames.push_str(",\"sc\":");
    push_js(frames, score);
    frames.push_str(",\"d\":");
    match m.depth {
        Some(d) => {
            let _ = write!(frames, "{d}");
        }
        None => frames.push_str("null"),
    }
    let _ = write!(
        frames,
        ",\"ms\":{},\"book\":{},\"clk\":",
        m.elapsed.as_millis(),
        m.book
    );
}

/// Each shown game id's picture parts: the board's head and legend, its layout, and the
/// picture of every piece token its games' positions hold.
fn boards_json(tokens: &BTreeMap<&'static str, BTreeSet<String>>) -> String {
    let boards: serde_json::Map<String, serde_json::Value> = (tokens.iter())
        .filter_map(|(id, tokens)| {
            let board = Board::of(find_game(id)?);
            let pieces: serde_json::Map<String, serde_json::Value> = (tokens.iter())
                .filter_map(|t| Some((t.clone(), board.piece(t)?.into())))
                .collect();
            let mut layout = board.layout_json();
            layout["head"] = board.head().into();
            layout["legend"] = board.legend().into();
            layout["pieces"] = pieces.into();
            Some((id.to_string(), layout))
        })
        .collect();
    // As js(): nothing in the data may end the script element.
    serde_json::Value::Object(boards)
        .to_string()
        .replace("</", "<\\/")
        .replace("<!--", "<\\!--")
}

/// The viewer's section of the page.
pub fn section(h: &mut String, showcase: &Showcase) {
    let games = showcase.games();
    if games.is_empty() {
        return;
    }
    let mut tokens: BTreeMap<&'static str, BTreeSet<String>> = BTreeMap::new();
    // The games' data, comma-separated, in one string (no string per game to join).
    let mut data = String::new();
    let mut shown = 0usize;
    for e in &games {
        let Some(id) = find_game(&e.record.game).map(|g| g.id) else {
            continue;
        };
        let before = data.len();
        if shown > 0 {
            data.push(',');
        }
        if game_json(e, tokens.entry(id).or_default(), &mut data) {
            shown += 1;
        } else {
            data.truncate(before);
        }
    }
    // The beam is explained only where moves fire one (not under chess or Ultima).
    let lasers = games
        .iter()
        .filter_map(|e| find_game(&e.record.game))
        .any(|g| g.drawing.lasers);
    let beam = match lasers {
        true => "; the red line is the laser beam of the move, ending on the piece it removed",
        false => "",
    };
    let _ = write!(
        h,
        "<h2 id=\"viewer\">Games</h2><p>{} of {} games shown{}. Buttons or the arrow keys step \
         through a game{beam}.</p>",
        shown,
        showcase.seen,
        if (shown as u64) < showcase.seen {
            format!(
                " (at most {}, --viewer-games: games a fault ended first, then decisive games, \
                    then draws)",
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
    let script = SCRIPT
        .replace("__CELL__", &CELL.to_string())
        .replace("__MARGIN__", &MARGIN.to_string());
    let _ = write!(
        h,
        "<div id=\"view\"><p><select id=\"pick\">{options}</select> \
         <button id=\"first\">|&lt;</button><button id=\"prev\">&lt;</button>\
         <button id=\"next\">&gt;</button><button id=\"last\">&gt;|</button> \
         <span id=\"where\"></span></p><div id=\"board\"></div><p id=\"info\"></p>\
         <ol id=\"moves\"></ol></div><script id=\"viewer-script\">const BOARDS={};\nconst \
         GAMES=[{}];\n{script}</script>",
        boards_json(&tokens),
        data
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

/// Draws a frame as `Board::frame` does, around the head, piece pictures and legend made in
/// Rust (`BOARDS`), so the browser's picture is `arbiter show --svg`'s; `window.arbiterBoard`
/// hands the report test a frame's picture. `C` and `M` are `CELL` and `MARGIN`.
const SCRIPT: &str = r###"(function(){
const C=__CELL__,M=__MARGIN__;let g=0,p=0;
const $=id=>document.getElementById(id);
function tokens(B,fen){const field=fen.split(' ')[0].split('[')[0];const pairs=B.letters>1;
 return field.split('/').map(rank=>{const cells=[];let i=0;while(i<rank.length){const c=rank[i];
  if(/[0-9]/.test(c)){let d='';while(i<rank.length&&/[0-9]/.test(rank[i]))d+=rank[i++];for(let k=0;k<+d;k++)cells.push(null);continue;}
  if(c==='*'){for(let k=0;k<B.files;k++)cells.push(null);i++;continue;}
  const s=i;if(rank[i]==='+')i++;i+=B.letters;while(!pairs&&rank[i]==='+')i++;cells.push(rank.slice(s,i));}
  return cells;});}
function draw(B,f){const R=B.ranks,first=B.first;
 const corner=(x,y)=>[M+x*C,M+(R-1-y)*C],ctr=(x,y)=>[M+x*C+C/2,M+(R-1-y)*C+C/2];
 const at=s=>[s.charCodeAt(0)-97,parseInt(s.slice(1))-first];
 let o='';
 for(const s of f.last||[]){const[x,y]=corner(...at(s));o+=`<rect class="last" data-square="${s}" x="${x}" y="${y}" width="${C}" height="${C}" fill="#f4d03f" fill-opacity="0.7"/>`;}
 const beam=f.beam||[];if(beam.length){const pts=beam.map(s=>ctr(...at(s)).join(',')).join(' ');
  o+=`<g class="beam" data-end="${beam[beam.length-1]}" fill="none" stroke-linejoin="round"><polyline points="${pts}" stroke="#fff" stroke-width="8" stroke-opacity="0.75"/><polyline points="${pts}" stroke="#e8112d" stroke-width="3"/></g>`;}
 tokens(B,f.fen).forEach((cells,row)=>{const y=R-1-row;cells.forEach((t,x)=>{const pic=t&&B.pieces[t];if(pic){const[cx,cy]=ctr(x,y);
  o+=`<g class="piece" data-square="${String.fromCharCode(97+x)}${y+first}" transform="translate(${cx},${cy})">${pic}</g>`;}});});
 for(const s of f.rm||[]){const[cx,cy]=ctr(...at(s));o+=`<g class="removed" data-square="${s}" stroke="#e8112d" stroke-width="3" fill="none"><circle cx="${cx}" cy="${cy}" r="21"/><path d="M${cx-12} ${cy-12}l24 24m0 -24l-24 24"/></g>`;}
 if(B.hands){const m=/\[([^\]]*)/.exec(f.fen.split(' ')[0]),hand=m?m[1]:'';
  const of=re=>{const s=[...hand].filter(c=>re.test(c)).join('').toUpperCase();return s||'-';};
  o+=`<text class="hands" x="${M}" y="${B.handsY}" font-size="13">in hand: ${B.sides[0]} ${of(/[A-Z]/)}, ${B.sides[1]} ${of(/[a-z]/)}</text>`;}
 return B.head+o+B.legend;}
window.arbiterBoard=(gi,pi)=>draw(BOARDS[GAMES[gi].game],GAMES[gi].frames[pi]);
function show(){const G=GAMES[g],f=G.frames[p];$('pick').value=g;
 $('board').innerHTML=draw(BOARDS[G.game],f); $('where').textContent=`ply ${p} of ${G.frames.length-1}`;
 $('info').textContent=p==0?`${G.white} - ${G.black}: ${G.result}, ${G.end}`:
  `${p%2?G.white:G.black}: ${f.mv}${f.book?' (book)':` score ${f.sc||'-'} depth ${f.d??'-'} ${f.ms} ms`}${(f.rm||[]).length?', removed on '+f.rm.join(' '):''}`+
  (f.clk?`; clocks: ${BOARDS[G.game].sides[0]} ${(f.clk[0]/1000).toFixed(2)} s, ${BOARDS[G.game].sides[1]} ${(f.clk[1]/1000).toFixed(2)} s`:'');
 $('moves').innerHTML=G.frames.slice(1).map((m,i)=>`<li${i+1==p?' class="now"':''}><a href="#g${g}p${i+1}">${m.mv}</a></li>`).join('');
 history.replaceState(null,'',`#g${g}p${p}`);}
function go(n){p=Math.max(0,Math.min(GAMES[g].frames.length-1,n));show();}
$('first').onclick=()=>go(0);$('prev').onclick=()=>go(p-1);$('next').onclick=()=>go(p+1);$('last').onclick=()=>go(1e9);
$('pick').onchange=e=>{g=+e.target.value;p=0;show();};
document.addEventListener('keydown',e=>{if(e.key==='ArrowRight')go(p+1);if(e.key==='ArrowLeft')go(p-1);if(e.key==='Home')go(0);if(e.key==='End')go(1e9);});
function fromHash(){const m=/^#g(\d+)p(\d+)$/.exec(location.hash);if(m&&GAMES[+m[1]]){g=+m[1];p=+m[2];}go(p);if(m)$("view").scrollIntoView();}
window.addEventListener('hashchange',fromHash);fromHash();})();"###;

#[cfg(test)]
mod tests {
    use super::*;

    /// A chess report's viewer says nothing of a laser; a Leiserchess one explains its beam.
    #[test]
    fn the_beam_is_explained_only_for_games_with_lasers() {
        for (game, said) in [("chess", false), ("leiserchess", true)] {
            let mut showcase = Showcase::default();
            showcase.add(&Entry {
                index: 0,
                record: crate::referee::GameRecord {
                    turnaround_us: Vec::new(),
                    overloaded: false,
                    pv_warnings: Vec::new(),
                    rules: Vec::new(),
                    game: game.into(),
                    white: "a".into(),
                    black: "b".into(),
                    start_fen: None,
                    moves: Vec::new(),
                    outcome: Outcome::Draw,
                    termination: crate::game::Termination::MaxPlies,
                    detail: "drawn".into(),
                    time_control: "-".into(),
                    duration: std::time::Duration::ZERO,
                    opening: 0,
                    round: 1,
                    date: "2026.11.29".into(),
                },
            });
            let mut h = String::new();
            section(&mut h, &showcase);
            assert!(h.contains("Games</h2>"), "{game}: {h}");
            assert_eq!(h.contains("laser beam"), said, "{game}: {h}");
        }
    }

    /// The copy without escaping must be what escaping would have written.
    #[test]
    fn a_string_pushed_is_the_string_escaped() {
        let texts = [
            "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
            "e2e4",
            "",
            "</script>",
            "a<!--b",
            "say \"hi\"\\",
            "tab\there\nline\u{1}",
            "ünïcödé ♞",
            "<",
            "x\u{7f}y",
        ];
        for text in texts {
            let mut out = String::from("[");
            push_js(&mut out, text);
            assert_eq!(out, format!("[{}", js(text)), "{text:?}");
        }
        let mut out = String::new();
        push_js_list(&mut out, &["a1".to_string(), "</".to_string()]);
        assert_eq!(out, format!("[{},{}]", js("a1"), js("</")));
    }
}
