//! Short, deterministic fuzzing runs, so `cargo test --workspace` exercises
//! every target; longer runs go through `.ci/fuzz.sh` or the binary.

use a3s_code_bridge_fuzz::rng::Rng;
use a3s_code_bridge_fuzz::{encode, frames, fuzz, run_case, target, Budget, Hooks, Target};

const SEED: u64 = 0x5eed;

/// One test, so that no other test clears the panic record mid-case.
#[test]
fn every_target_survives_a_short_deterministic_run_and_panics_are_caught() {
    for (name, iterations) in [("frames", 2000), ("classify", 2000), ("dispatch", 300)] {
        let mut t = target(name).expect("target");
        let outcome = fuzz(
            &mut *t,
            SEED,
            Budget::Iterations(iterations),
            &Hooks::default(),
        );
        match outcome {
            Ok(stats) => assert_eq!(stats.executions, iterations),
            Err(f) => panic!(
                "{name} failed at case {} (seed {SEED}): {}\ninput (base64): {}",
                f.iteration,
                f.reason,
                encode::base64(&f.input)
            ),
        }
    }

    // The harness itself: a panic inside a spawned task fails the case even
    // though nobody awaits the task's result.
    struct PanicsInATask;
    impl Target for PanicsInATask {
        fn name(&self) -> &'static str {
            "test"
        }
        fn header_len(&self) -> usize {
            0
        }
        fn seeds(&self, _: &mut Rng) -> Vec<Vec<u8>> {
            vec![vec![]]
        }
        fn mutate(&self, _: &mut Rng, base: &[u8], _: &[u8]) -> Vec<u8> {
            base.to_vec()
        }
        fn run(&mut self, _: &[u8]) -> Result<Vec<u64>, String> {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .build()
                .unwrap();
            runtime.block_on(async {
                drop(tokio::spawn(async { panic!("deliberate panic in a task") }));
                tokio::task::yield_now().await;
            });
            Ok(vec![])
        }
    }
    let reason = run_case(&mut PanicsInATask, b"").unwrap_err();
    assert!(reason.starts_with("panic in a task"), "{reason}");
    assert!(reason.contains("deliberate"), "{reason}");
}

#[test]
fn the_frames_oracle_matches_the_documented_examples() {
    assert_eq!(
        frames::oracle(b"{\"a\":1}\n\nxyz", 100),
        vec![Some(&b"{\"a\":1}"[..]), Some(&b""[..]), Some(&b"xyz"[..])]
    );
    let mut input = vec![b'x'; 50];
    input.extend_from_slice(b"\nok\n");
    input.extend_from_slice(&[b'y'; 20]);
    assert_eq!(
        frames::oracle(&input, 10),
        vec![None, Some(&b"ok"[..]), None]
    );
    assert!(frames::oracle(b"", 10).is_empty());
    // The checked run agrees, for every buffer capacity.
    for capacity in 0..16u8 {
        let mut case = vec![9, capacity, capacity];
        case.extend_from_slice(&input);
        frames::Frames::check(&case).unwrap();
    }
}
