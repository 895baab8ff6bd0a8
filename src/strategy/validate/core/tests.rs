//! Table-driven tests of the core kinds.
