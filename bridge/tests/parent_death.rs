//! The bridge never outlives its host: on Linux the kernel kills it when
//! its parent dies, even while its stdin is held open by someone else.

#![cfg(target_os = "linux")]

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn alive(pid: i32) -> bool {
    // A zombie still has a /proc entry; its state is 'Z'.
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .map(|stat| {
            let state = stat.rsplit(')').next().unwrap_or("").trim_start();
            !state.starts_with('Z')
        })
        .unwrap_or(false)
}

#[test]
fn the_bridge_dies_with_its_parent() {
    let bridge = env!("CARGO_BIN_EXE_a3s-code-bridge");
    // The parent shell starts the bridge with a stdin that stays open (a
    // sleeping writer), reports its pid, then waits. Killing the shell must
    // take the bridge down although its input never reaches end of file.
    let mut parent = Command::new("sh")
        .arg("-c")
        .arg(format!("sleep 30 | {bridge} & echo $!; wait"))
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(parent.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let pid: i32 = line.trim().parse().unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    // Give the bridge time to start and arm its parent-death signal.
    std::thread::sleep(Duration::from_millis(200));
    assert!(alive(pid), "the bridge should be running");

    parent.kill().unwrap();
    parent.wait().unwrap();
    while alive(pid) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(!alive(pid), "the bridge outlived its parent");
}
