//! Tests of the small-RAM writers.
