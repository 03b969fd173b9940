//! Tests of the tilelang front end and launchers: `tests/ui.rs` runs the compile-fail cases under
//! `ui/<category>/` (each with the exact diagnostics it must produce), and `tests/launch.rs`
//! checks every launch-time error of the generated launchers.
