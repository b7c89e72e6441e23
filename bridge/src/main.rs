//! The `a3s-code-bridge` binary: stdin/stdout JSON-RPC, logs on stderr.

use a3s_code_bridge::stdio::{thread_reader, thread_writer};
use a3s_code_bridge::{serve, BridgeConfig};

fn main() {
    let config = match BridgeConfig::from_args(std::env::args().skip(1)) {
        Ok(config) => config,
        Err(message) => {
            eprintln!("{message}");
            let code = if message.starts_with("unknown option") || message.contains("needs") {
                2
            } else {
                0
            };
            std::process::exit(code);
        }
    };
    init_logging();
    die_with_parent();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("tokio runtime");
    let input = thread_reader(std::io::stdin());
    let (output, writer) = thread_writer(std::io::stdout());
    let exit = runtime.block_on(serve(input, output, config));
    // Every queued line reaches stdout before the process ends.
    writer.join();
    tracing::info!("exiting: {exit:?}");
    // Exit without waiting for the stdin thread, which may still be parked
    // in read(2).
    std::process::exit(0);
}

fn init_logging() {
    let filter = std::env::var("A3S_LOG")
        .or_else(|_| std::env::var("RUST_LOG"))
        .unwrap_or_else(|_| "warn".into());
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_ansi(false)
        .with_env_filter(tracing_subscriber::EnvFilter::new(filter))
        .init();
}

/// The bridge must never outlive its host: on Linux the kernel sends us
/// SIGKILL when the parent dies (end of input covers the other systems).
fn die_with_parent() {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: prctl(PR_SET_PDEATHSIG) takes a signal number and has no
        // memory-safety preconditions.
        let parent = unsafe { libc::getppid() };
        unsafe {
            libc::prctl(
                libc::PR_SET_PDEATHSIG,
                libc::SIGKILL as libc::c_ulong,
                0,
                0,
                0,
            );
        }
        // The parent may have died before prctl took effect.
        if unsafe { libc::getppid() } != parent {
            std::process::exit(0);
        }
    }
}
