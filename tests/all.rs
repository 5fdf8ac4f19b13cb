//! Every integration test, one module per file, built and run as one program: its tests run
//! side by side on every CPU, and the harness is linked once.

mod common;

mod bayeselo_agreement;
mod bisect;
mod broken_setup;
mod cheaters;
mod chess_rules;
mod compliance;
mod course_tester;
mod earlier_format;
mod engine_options;
mod fairy_stockfish;
mod group_commit;
mod hostile_input;
mod hostile_runs;
mod journal_repair;
mod laser_beams;
mod laserchess_rules;
mod layouts;
mod leaperhouse_rules;
mod leiserchess_rules;
mod merge_proofs;
mod newcomer_edges;
mod quick_start;
mod real_engine_setups;
mod report_viewer;
mod run_cli;
mod run_record;
mod sandbox;
mod sandbox_escape;
mod slurm_cluster;
mod slurm_script;
mod split_runs;
mod sprt_error_rates;
mod stockfish;
mod terminal_progress;
mod their_command_lines;
mod their_lines_verbatim;
mod tools_cli;
mod tune;
mod ultima_rules;
mod watch_server;
mod wrapper_engines;
