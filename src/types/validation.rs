//! Name validation (in progress).
