//! Discovery documents (in progress).
