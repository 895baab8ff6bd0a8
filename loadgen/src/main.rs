//! `loadgen`: drives a Kubernetes API server with list/watch/write scenarios.
//!
//! The first vertical slice only reserves the crate; scenarios, measurements and
//! reports arrive with the loadgen issue.

fn main() {
    eprintln!("loadgen: no scenarios yet (see docs/architecture.md)");
    std::process::exit(2);
}
