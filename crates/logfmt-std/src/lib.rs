//! std layer
