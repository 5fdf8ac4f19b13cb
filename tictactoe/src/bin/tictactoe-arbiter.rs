//! arbiter, knowing tic-tac-toe besides its own games.

fn main() -> std::process::ExitCode {
    arbiter_rules::game::register_game::<arbiter_tictactoe::TicTacToe>();
    arbiter_cli::abort_on_panic();
    arbiter_cli::run()
}
