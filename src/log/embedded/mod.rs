//! The embedded durable log (filled in by the first vertical slice).
