//! Engines as processes: configuration, the protocol they speak, and the process itself.

pub mod book;
pub mod cgroup;
pub mod cgroup2;
pub mod cleanup;
pub mod config;
pub mod dialect;
pub mod freezer;
pub mod keeper;
pub mod log;
pub mod options;
pub mod orphans;
pub mod overhead;
pub mod process;
pub mod procfs;
pub mod protocol;
pub mod reader;
pub mod sandbox;
pub mod sched;
pub mod scratch;
pub mod seccomp;
pub mod stage;
pub mod stderr;
pub mod watchdog;

pub use config::{ConfigError, EngineConfig, Recorded, SearchLimits};
pub use dialect::{ClockReading, Proto, Turn};
pub use process::{EngineError, EngineProcess, Thought};
pub use protocol::{parse_line, EngineLine, Info, Score};
pub use reader::{each_line, Line, MAX_LINE};
pub use sandbox::{Confinement, SandboxMode};
