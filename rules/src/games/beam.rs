//! The laser beam's walk, one for every laser game: from the firing piece, square by square,
//! until a piece stops it, destroys it or the beam leaves the board. What a piece does to a beam
//! (turn it, stop it, be destroyed) is each game's own reflection table, given as `meet`.

/// What a piece does to a beam that reaches it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Meet {
    /// A mirror sends the beam on in this direction.
    Turn(usize),
    /// A shield, or a Laser, absorbs the beam: nothing is destroyed.
    Stop,
    /// The piece is hit and destroyed.
    Destroy,
}

/// Where a beam ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BeamEnd {
    Destroyed(usize),
    Blocked(usize),
    /// Off the board, travelling in this direction.
    Left(usize),
}

/// Walks a beam leaving `start` in direction `dir` (an index into `deltas`) over a padded
/// board whose empty cells are 0 and off-board cells `off`.
#[inline(always)]
pub fn walk(
    cells: &[u8],
    deltas: &[isize; 4],
    off: u8,
    start: usize,
    dir: usize,
    meet: impl Fn(u8, usize) -> Meet,
) -> BeamEnd {
    walk_seeing(cells, deltas, off, start, dir, meet, |_| {})
}

/// The squares a beam crosses, from `start` to where it ends (the last square on the board
/// when it leaves), for drawing it.
pub fn path(
    cells: &[u8],
    deltas: &[isize; 4],
    off: u8,
    start: usize,
    dir: usize,
    meet: impl Fn(u8, usize) -> Meet,
) -> Vec<usize> {
    let mut squares = vec![start];
    walk_seeing(cells, deltas, off, start, dir, meet, |sq| squares.push(sq));
    squares
}

/// `walk`, telling `seen` every board square the beam reaches.
#[inline(always)]
fn walk_seeing(
    cells: &[u8],
    deltas: &[isize; 4],
    off: u8,
    start: usize,
    mut dir: usize,
    meet: impl Fn(u8, usize) -> Meet,
    mut seen: impl FnMut(usize),
) -> BeamEnd {
    let mut sq = start;
    // A beam's path is reversible and begins at the firing piece, which stops any beam that
    // comes back to it, so it cannot loop; the bound only guards against a corrupt board.
    for _ in 0..4 * cells.len() {
        sq = sq.wrapping_add_signed(deltas[dir]);
        let cell = cells[sq];
        // Empty squares first: most of a beam's way, and the hot path of move generation.
        if cell == 0 {
            seen(sq);
            continue;
        }
        if cell == off {
            return BeamEnd::Left(dir);
        }
        seen(sq);
        match meet(cell, dir) {
            Meet::Turn(next) => dir = next,
            Meet::Stop => return BeamEnd::Blocked(sq),
            Meet::Destroy => return BeamEnd::Destroyed(sq),
        }
    }
    BeamEnd::Blocked(sq)
}
