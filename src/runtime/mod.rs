//! (filled in by the first vertical slice)

pub mod log_dir;
