//! The chess referee's common cases answered from the lines through the kings, by arithmetic
//! on squares, where shakmaty reads its attack tables.
//!
//! In a match every ply follows an engine's search, which empties the caches the referee shares
//! with it: each attack-table entry read is then a fetch from memory, and shakmaty's legality
//! test, its check detection and a move generation read several. The cases below read none:
//! - out of check, a pseudo-legal move of a piece that is not pinned is legal, and whether a
//!   piece is pinned is a walk along the one line from its king through it;
//! - a king step is legal when no enemy piece attacks the square it steps to: the eight lines
//!   and the knight, pawn and king squares around it, looked at square by square;
//! - after an ordinary move, only the piece moved and a slider behind the square it left can
//!   give check.
//!
//! Each answer is a claim the full rules would make too, or no answer (`None`, `false`): the
//! caller then asks shakmaty. The tests compare both on random games.

use shakmaty::{Bitboard, Board, Color, Move, Role, Square};

/// The step (a square offset) from `a` toward `b` when they share a rank, file or diagonal.
fn step(a: Square, b: Square) -> Option<i32> {
    let df = b.file() as i32 - a.file() as i32;
    let dr = b.rank() as i32 - a.rank() as i32;
    ((df, dr) != (0, 0) && (df == 0 || dr == 0 || df.abs() == dr.abs()))
        .then(|| df.signum() + 8 * dr.signum())
}

/// Whether a step moves along a rank or file (rather than a diagonal).
fn is_straight(step: i32) -> bool {
    matches!(step, 1 | -1 | 8 | -8)
}

/// Whether a slider of `role` moves along lines with this step.
fn slides_along(role: Role, step: i32) -> bool {
    match role {
        Role::Queen => true,
        Role::Rook => is_straight(step),
        Role::Bishop => !is_straight(step),
        _ => false,
    }
}

/// The first occupied square from `from` (not counting it) by `step`, before `to` if given.
fn first_occupied(
    from: Square,
    step: i32,
    occupied: Bitboard,
    to: Option<Square>,
) -> Option<Square> {
    let mut at = from;
    loop {
        let next = at as i32 + step;
        // A step off the board, or wrapping from one edge to the other, ends the line.
        if !(0..64).contains(&next)
            || (Square::new(next as u32).file() as i32 - at.file() as i32).abs() > 1
        {
            return None;
        }
        at = Square::new(next as u32);
        if Some(at) == to {
            return None;
        }
        if occupied.contains(at) {
            return Some(at);
        }
    }
}

/// Whether nothing stands strictly between two squares on one line.
fn clear_between(from: Square, to: Square, step: i32, occupied: Bitboard) -> bool {
    first_occupied(from, step, occupied, Some(to)).is_none()
}

/// The rank a side's pawns move toward, as a square offset.
fn forward(color: Color) -> i32 {
    color.fold_wb(8, -8)
}

/// Whether the piece on `from` is pinned to its `king`: the first piece on a line from the
/// king, with an enemy slider of that line next behind it.
fn pinned(board: &Board, us: Color, king: Square, from: Square) -> bool {
    let Some(s) = step(king, from) else {
        return false;
    };
    let occupied = board.occupied();
    if first_occupied(king, s, occupied, None) != Some(from) {
        return false;
    }
    first_occupied(from, s, occupied, None)
        .and_then(|behind| board.piece_at(behind))
        .is_some_and(|p| p.color != us && slides_along(p.role, s))
}

/// The eight steps of a queen (and of a king), as square offsets.
const LINES: [i32; 8] = [1, -1, 8, -8, 9, -9, 7, -7];

/// The knight's jumps, as (file, rank) offsets.
const JUMPS: [(i32, i32); 8] = [
    (1, 2),
    (2, 1),
    (2, -1),
    (1, -2),
    (-1, -2),
    (-2, -1),
    (-2, 1),
    (-1, 2),
];

/// The square `df` files and `dr` ranks from `at`, if it is on the board.
fn offset(at: Square, df: i32, dr: i32) -> Option<Square> {
    let (f, r) = (at.file() as i32 + df, at.rank() as i32 + dr);
    ((0..8).contains(&f) && (0..8).contains(&r)).then(|| Square::new((f + 8 * r) as u32))
}

/// The squares next to `at`.
fn around(at: Square) -> impl Iterator<Item = Square> {
    (-1..=1)
        .flat_map(|df| (-1..=1).map(move |dr| (df, dr)))
        .filter(|&d| d != (0, 0))
        .filter_map(move |(df, dr)| offset(at, df, dr))
}

/// Whether a piece of `by` attacks `at`, with `occupied` as the pieces that block lines.
fn attacked(board: &Board, by: Color, at: Square, occupied: Bitboard) -> bool {
    let theirs = |sq: Option<Square>, role: Role| {
        sq.is_some_and(|sq| board.piece_at(sq) == Some(role.of(by)))
    };
    // A pawn of `by` attacks from one rank behind `at`, as `by` moves.
    let behind = -forward(by) / 8;
    if theirs(offset(at, -1, behind), Role::Pawn) || theirs(offset(at, 1, behind), Role::Pawn) {
        return true;
    }
    if JUMPS
        .iter()
        .any(|&(df, dr)| theirs(offset(at, df, dr), Role::Knight))
        || around(at).any(|sq| theirs(Some(sq), Role::King))
    {
        return true;
    }
    LINES.iter().any(|&s| {
        first_occupied(at, s, occupied, None)
            .and_then(|sq| board.piece_at(sq))
            .is_some_and(|p| p.color == by && slides_along(p.role, s))
    })
}

/// Whether the king of `us` may step from `from` to `to` (a step, not castling): no enemy piece
/// attacks the square, with the king gone from its own.
fn king_step_is_legal(board: &Board, us: Color, from: Square, to: Square) -> bool {
    let df = to.file() as i32 - from.file() as i32;
    let dr = to.rank() as i32 - from.rank() as i32;
    (df, dr) != (0, 0)
        && df.abs() <= 1
        && dr.abs() <= 1
        && !board.by_color(us).contains(to)
        && !attacked(board, !us, to, board.occupied().without(from))
}

/// Whether, out of check, `us` has a pawn push or a knight move of a piece that is not pinned,
/// or a king step: then a legal move exists. `false` means only that this shortcut found none.
pub(super) fn plain_move_exists(board: &Board, us: Color, king: Square) -> bool {
    let empty = !board.occupied();
    let pawns = board.by_piece(Role::Pawn.of(us));
    let pushers = pawns & empty.shift(-forward(us));
    if pushers
        .into_iter()
        .any(|from| !pinned(board, us, king, from))
    {
        return true;
    }
    let own = board.by_color(us);
    let jumps = |from: Square| {
        JUMPS
            .iter()
            .any(|&(df, dr)| offset(from, df, dr).is_some_and(|to| !own.contains(to)))
    };
    let knights = board.by_piece(Role::Knight.of(us));
    knights
        .into_iter()
        .any(|from| !pinned(board, us, king, from) && jumps(from))
        || around(king).any(|to| king_step_is_legal(board, us, king, to))
}

/// The move `from`-`to` (with `promotion`) when it is legal by the shortcut: out of check, a
/// king step, or a pseudo-legal move of a piece that is not pinned (not a capture en passant).
/// `None` says nothing about its legality.
pub(super) fn plain_move(
    board: &Board,
    us: Color,
    in_check: bool,
    from: Square,
    to: Square,
    promotion: Option<Role>,
) -> Option<Move> {
    if in_check {
        return None;
    }
    let piece = board.piece_at(from).filter(|p| p.color == us)?;
    let king = board.king_of(us)?;
    if piece.role == Role::King {
        let legal = promotion.is_none() && king_step_is_legal(board, us, from, to);
        return legal.then_some(Move::Normal {
            role: Role::King,
            from,
            capture: board.role_at(to),
            to,
            promotion,
        });
    }
    if pinned(board, us, king, from) || board.by_color(us).contains(to) {
        return None;
    }
    let occupied = board.occupied();
    let capture = board.role_at(to);
    let df = to.file() as i32 - from.file() as i32;
    let dr = to.rank() as i32 - from.rank() as i32;
    let moves = match piece.role {
        Role::Knight => promotion.is_none() && df.abs() * dr.abs() == 2,
        Role::Pawn => {
            let ahead = forward(us) / 8;
            let last = to.rank() as i32 == us.fold_wb(7, 0);
            let promotes = match promotion {
                None => !last,
                Some(role) => last && !matches!(role, Role::Pawn | Role::King),
            };
            let push = df == 0
                && capture.is_none()
                && (dr == ahead
                    || (dr == 2 * ahead
                        && from.rank() as i32 == us.fold_wb(1, 6)
                        && !occupied.contains(Square::new((from as i32 + forward(us)) as u32))));
            // A diagonal step to an empty square is en passant: left to shakmaty.
            let takes = df.abs() == 1 && dr == ahead && capture.is_some();
            promotes && (push || takes)
        }
        role => {
            promotion.is_none()
                && step(from, to)
                    .is_some_and(|s| slides_along(role, s) && clear_between(from, to, s, occupied))
        }
    };
    moves.then_some(Move::Normal {
        role: piece.role,
        from,
        capture,
        to,
        promotion,
    })
}

/// Whether no other piece of `us` of `role` (a knight or a slider) could move to `to`, legal or
/// not: then the move from `from` is written in SAN without its square of departure, as the
/// full rules would write it. `false` means only that another might.
pub(super) fn alone_to_reach(
    board: &Board,
    us: Color,
    role: Role,
    from: Square,
    to: Square,
) -> bool {
    let ours = |sq: Square| sq != from && board.piece_at(sq) == Some(role.of(us));
    match role {
        Role::Knight => !JUMPS
            .iter()
            .any(|&(df, dr)| offset(to, df, dr).is_some_and(ours)),
        Role::Bishop | Role::Rook | Role::Queen => !LINES.iter().any(|&s| {
            slides_along(role, s) && first_occupied(to, s, board.occupied(), None).is_some_and(ours)
        }),
        _ => false,
    }
}

/// The pieces checking the side to move after `mv`, an ordinary move (not castling, en passant
/// or a drop) of the other side, read on the board after it. `None` for the other moves.
pub(super) fn checkers_after(board: &Board, mover: Color, mv: Move) -> Option<Bitboard> {
    let Move::Normal { from, to, .. } = mv else {
        return None;
    };
    let king = board.king_of(!mover)?;
    let occupied = board.occupied();
    let mut checkers = Bitboard::EMPTY;
    let role = board.role_at(to)?;
    let df = king.file() as i32 - to.file() as i32;
    let dr = king.rank() as i32 - to.rank() as i32;
    let direct = match role {
        Role::Knight => df.abs() * dr.abs() == 2,
        Role::Pawn => df.abs() == 1 && dr == forward(mover) / 8,
        Role::King => false,
        role => step(to, king)
            .is_some_and(|s| slides_along(role, s) && clear_between(to, king, s, occupied)),
    };
    if direct {
        checkers.add(to);
    }
    // The square left may open a line from the king to a slider of the mover behind it.
    if let Some(s) = step(king, from) {
        if let Some(behind) = first_occupied(king, s, occupied, None) {
            let piece = board.piece_at(behind)?;
            if behind != to && piece.color == mover && slides_along(piece.role, s) {
                checkers.add(behind);
            }
        }
    }
    Some(checkers)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::pick;
    use shakmaty::uci::UciMove;
    use shakmaty::{Chess, Position};

    /// Positions of random games from the start (the same every run), each with its legal moves.
    fn random_positions(games: usize, mut each: impl FnMut(&Chess, &[Move])) {
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        for _ in 0..games {
            let mut pos = Chess::default();
            for _ in 0..400 {
                let moves: Vec<Move> = pos.legal_moves().into_iter().collect();
                each(&pos, &moves);
                if moves.is_empty() {
                    break;
                }
                pos.play_unchecked(pick(&mut seed, &moves));
            }
        }
    }

    /// Every from-to pair of the side to move's pieces, with each promotion and none: a move
    /// the shortcut accepts is the move shakmaty reads from the same text, legal; and nine in
    /// ten legal moves are accepted (the rest: pinned pieces, castling, en passant, any move
    /// out of check).
    #[test]
    fn a_move_the_shortcut_accepts_is_legal_and_the_same_move() {
        let (mut accepted, mut legal) = (0u64, 0u64);
        let promotions = [
            None,
            Some(Role::Queen),
            Some(Role::Knight),
            Some(Role::King),
        ];
        random_positions(120, |pos, moves| {
            let board = pos.board();
            let in_check = pos.checkers().any();
            legal += moves.len() as u64;
            for from in pos.us() {
                for to in Bitboard::FULL {
                    for promotion in promotions {
                        let Some(mv) = plain_move(board, pos.turn(), in_check, from, to, promotion)
                        else {
                            continue;
                        };
                        let uci = UciMove::Normal {
                            from,
                            to,
                            promotion,
                        };
                        assert_eq!(uci.to_move(pos).ok(), Some(mv), "{uci} in {}", fen(pos));
                        accepted += 1;
                    }
                }
            }
        });
        assert!(legal > 100_000, "{legal}");
        assert!(accepted * 10 > legal * 9, "{accepted} of {legal}");
    }

    /// After every legal move of random games, the checkers found from the two squares the
    /// move touched are shakmaty's; direct, discovered and double checks are among them.
    #[test]
    fn the_checkers_after_a_move_are_the_ones_the_board_has() {
        let mut kinds = [0u32; 3];
        random_positions(150, |pos, moves| {
            for &mv in moves {
                let mut after = pos.clone();
                after.play_unchecked(mv);
                let Some(found) = checkers_after(after.board(), pos.turn(), mv) else {
                    assert!(!matches!(mv, Move::Normal { .. }), "{mv:?}");
                    continue;
                };
                assert_eq!(found, after.checkers(), "{mv:?} in {}", fen(pos));
                if found.more_than_one() {
                    kinds[2] += 1;
                } else if found.any() {
                    kinds[usize::from(!found.contains(mv.to()))] += 1;
                }
            }
        });
        assert!(
            kinds[0] > 10_000 && kinds[1] > 1_000 && kinds[2] > 50,
            "direct, discovered, double: {kinds:?}"
        );
    }

    /// Where the shortcut says a move exists, one of the pawn pushes, knight moves or king steps
    /// it looks at is among the legal moves; and it says so in 99 of 100 positions out of check.
    #[test]
    fn a_move_found_by_the_shortcut_is_a_legal_move() {
        let (mut found, mut out_of_check) = (0u32, 0u32);
        random_positions(150, |pos, moves| {
            if pos.checkers().any() {
                return;
            }
            out_of_check += 1;
            let (board, us) = (pos.board(), pos.turn());
            let king = board.king_of(us).unwrap();
            if !plain_move_exists(board, us, king) {
                return;
            }
            found += 1;
            let by_unpinned = moves.iter().any(|m| {
                m.role() == Role::King
                    || (matches!(m.role(), Role::Pawn | Role::Knight)
                        && !m.is_en_passant()
                        && !pinned(board, us, king, m.from().unwrap()))
            });
            assert!(by_unpinned, "{}", fen(pos));
        });
        assert!(found * 100 > out_of_check * 99, "{found} of {out_of_check}");
    }

    /// Where the shortcut says a piece is alone to reach its square, shakmaty's SAN names no
    /// square of departure either; and the shortcut says so for most piece moves.
    #[test]
    fn a_piece_alone_to_reach_its_square_needs_no_disambiguation() {
        let (mut alone, mut pieces) = (0u32, 0u32);
        random_positions(150, |pos, moves| {
            for &mv in moves {
                let Move::Normal { role, from, to, .. } = mv else {
                    continue;
                };
                if matches!(role, Role::Pawn | Role::King) {
                    continue;
                }
                pieces += 1;
                if alone_to_reach(pos.board(), pos.turn(), role, from, to) {
                    alone += 1;
                    let san = shakmaty::san::San::from_move(pos, mv);
                    let bare = shakmaty::san::San::disambiguate(mv, &shakmaty::MoveList::new());
                    assert_eq!(san, bare, "{mv:?} in {}", fen(pos));
                }
            }
        });
        assert!(alone * 10 > pieces * 7, "{alone} of {pieces}");
    }

    /// Lines stop at the board's edge: no rook or diagonal wraps from the h-file to the a-file.
    #[test]
    fn lines_do_not_wrap_around_the_board() {
        let b = |fen: &str| -> Chess {
            shakmaty::fen::Fen::from_ascii(fen.as_bytes())
                .unwrap()
                .into_position(shakmaty::CastlingMode::Standard)
                .unwrap()
        };
        // A rook on h3 and the king on a4: one square apart as indices, on no common line.
        let pos = b("8/8/8/8/k7/7R/8/4K3 w - - 0 1");
        let mv = UciMove::Normal {
            from: Square::H3,
            to: Square::H2,
            promotion: None,
        }
        .to_move(&pos)
        .unwrap();
        let mut after = pos.clone();
        after.play_unchecked(mv);
        assert_eq!(
            checkers_after(after.board(), Color::White, mv),
            Some(Bitboard::EMPTY)
        );
        assert_eq!(step(Square::H3, Square::A4), None);
        assert_eq!(first_occupied(Square::H3, 1, Bitboard::FULL, None), None);
        assert_eq!(first_occupied(Square::H3, 9, Bitboard::FULL, None), None);
    }

    fn fen(pos: &Chess) -> String {
        shakmaty::fen::Fen::from_position(pos, shakmaty::EnPassantMode::Legal).to_string()
    }
}
