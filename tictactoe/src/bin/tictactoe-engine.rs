//! The bundled engine, knowing tic-tac-toe besides its own games.

fn main() {
    arbiter_engines::register_game::<arbiter_tictactoe::TicTacToe>();
    arbiter_engines::run()
}
