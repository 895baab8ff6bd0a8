//! Tests of the embedded log as a whole.
