//! Compile-fail tests: every kernel under `ui/<category>/` must be rejected with the error
//! recorded next to it in `<case>.stderr` (span on the offending tokens, a hint naming the fix).
//! Regenerate after a deliberate change with `TRYBUILD=overwrite cargo test -p tests --test ui`
//! and read every changed `.stderr`.

#[test]
fn ui() {
    let t = trybuild::TestCases::new();
    t.compile_fail("ui/*/*.rs");
}
