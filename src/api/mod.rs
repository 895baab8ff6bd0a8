//! (filled in by the first vertical slice)
